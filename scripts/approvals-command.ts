// `handoff-relay approvals list | approve ID --as WHO | reject ID --as WHO --reason TEXT`: approvals without Slack.
import { closest, parseOptions } from './cli-help';
import { APPROVALS_COMMAND } from './cli-commands';
import type { AdminCall } from './admin-commands';

interface ApprovalLine {
  approval_id: string;
  thread_id: string;
  action: string;
  actor: string;
  status: string;
  approvers: string[];
  quorum: number;
  approved_by: string[];
  reason: string | null;
  outcome: { applied: boolean; message: string } | null;
  deadline: string;
}

export async function approvalsCommand(
  argv: string[],
  admin: AdminCall,
  out: (text: string) => void,
  fail: (message: string) => Error,
): Promise<void> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseOptions(APPROVALS_COMMAND.name, APPROVALS_COMMAND.options, rest);
  switch (sub) {
    case 'list': {
      const query = new URLSearchParams();
      if (values.status) query.set('status', values.status);
      if (values.approver) query.set('approver', values.approver);
      const { approvals } = (await admin('GET', `/admin/approvals${query.size ? `?${query}` : ''}`)) as {
        approvals: ApprovalLine[];
      };
      if (approvals.length === 0) {
        out('no approvals\n');
        return;
      }
      for (const a of approvals) {
        const votes = `${a.approved_by.length}/${a.quorum}`;
        const tail = a.status === 'pending' ? `decide by ${a.deadline}` : (a.reason ?? a.outcome?.message ?? '');
        out(
          `${a.approval_id}  ${a.status}  ${a.action} by ${a.actor}  approvers: ${a.approvers.join(', ')} (${votes})  ${tail}\n`,
        );
      }
      return;
    }
    case 'approve':
    case 'reject': {
      const id = positionals[0];
      if (!id) throw fail(`approvals ${sub} needs an approval ID (see approvals list)`);
      if (!values.as)
        throw fail(`approvals ${sub} needs --as WHO: the approver you act for (a handle or a Slack user id)`);
      if (sub === 'reject' && !values.reason)
        throw fail('approvals reject needs --reason TEXT (the sender is told why)');
      const answer = (await admin(
        'POST',
        `/admin/approvals/${encodeURIComponent(id)}/${sub}`,
        sub === 'reject' ? { as: values.as, reason: values.reason } : { as: values.as },
      )) as {
        message: string;
        approval: ApprovalLine;
      };
      out(`${answer.message}\n${answer.approval.approval_id}: ${answer.approval.status}\n`);
      return;
    }
    default: {
      const near = sub ? closest(sub, ['list', 'approve', 'reject']) : undefined;
      throw fail(
        `unknown approvals command "${sub ?? ''}"${near ? `; did you mean ${near}?` : ''} (handoff-relay approvals --help)`,
      );
    }
  }
}
