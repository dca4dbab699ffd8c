// How approved calls are applied, given to the approval decisions when they are built: a transition in the
// approval's own thread write, an append or a run right after it, each asked of the policy in force first.
import type { ApprovalAppliers } from './approvals';
import type { HandoffRuns } from './handoff-runs';
import { isRefusal, type Messages } from './messages';
import type { ThreadPolicy } from './thread-policy';
import type { Transitions } from './transitions';

export interface ApprovedCallsDeps {
  transitions: Pick<Transitions, 'applyApproved'>;
  messages: Pick<Messages, 'appendApproved'>;
  runs: Pick<HandoffRuns, 'request'>;
  policy: Pick<ThreadPolicy, 'recheck'>;
}

export function approvedCallAppliers({ transitions, messages, runs, policy }: ApprovedCallsDeps): ApprovalAppliers {
  return {
    transition: transitions.applyApproved,
    message: async (doc, record, actor) => {
      if (record.action !== 'handoff.run') return messages.appendApproved(doc, record, actor);
      // Queued once however often it is asked: an active run of the thread is the one this approval queued.
      try {
        const run = await runs.request(actor, doc._id, record.via, undefined, { approved: true });
        return { message: `${record.action} was applied as ${actor.handle} (run ${run.run_id} ${run.status})` };
      } catch (error) {
        if (isRefusal(error)) return { refusal: error.message };
        throw error;
      }
    },
    recheck: (doc, record, actor) => policy.recheck(doc, record, actor),
  };
}
