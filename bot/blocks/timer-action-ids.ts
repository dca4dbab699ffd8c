// The Slack ids of the timer notices' controls (Snooze, Reassign, Resend), shared by the DM and the notices.

export const TIMER_ACTION_IDS = {
  snooze1h: 'handoff_snooze_1h',
  snoozeTomorrow: 'handoff_snooze_tomorrow',
  snoozeWeek: 'handoff_snooze_week',
  reassign: 'handoff_reassign',
  resend: 'handoff_resend',
  /** The escalation DM to a lead: nudge the recipient, reassign (a modal), open the inbox (a link). */
  escalationNudge: 'handoff_escalation_nudge',
  escalationReassign: 'handoff_escalation_reassign',
  escalationOpen: 'handoff_escalation_open',
} as const;

/** Which snooze each Snooze button asks for: the choice comes from the button's id, never from its value. */
export const SNOOZE_BY_ACTION = {
  [TIMER_ACTION_IDS.snooze1h]: '1h',
  [TIMER_ACTION_IDS.snoozeTomorrow]: 'tomorrow',
  [TIMER_ACTION_IDS.snoozeWeek]: 'week',
} as const;

/** The Reassign modal and its one field. */
export const REASSIGN_VIEW = {
  callbackId: 'handoff_reassign_modal',
  block: 'reassign_to',
  action: 'reassign_user',
} as const;
