// The ten tools every MCP transport of the relay must offer, as the tests expect them (sorted).
export const MCP_TOOL_NAMES = [
  'accept_handoff',
  'check_approval',
  'check_inbox',
  'complete_handoff',
  'decline_handoff',
  'draft_proposed_action',
  'handoff_to_teammate',
  'list_teammates',
  'send_message',
  'view_thread',
] as const;
