// Who approves: a rule's approver names resolved to people, and who a decision's voter is.
import type { ApproverRef, Voter } from '../domain/approval';
import type { AgentDoc } from '../domain/documents';
import { RelayError } from '../domain/errors';
import type { Teammates } from './teammates';

export interface ApproversDeps {
  teammates: Pick<Teammates, 'get' | 'bySlackUser' | 'list'>;
}

export class Approvers {
  constructor(private readonly deps: ApproversDeps) {}

  /**
   * The people a rule's approvers name. Each entry must resolve: a handle to an active teammate, `role:NAME` to at
   * least one, `recipient_lead`/`sender_lead` to the lead on that card; otherwise policy_denied names the entry.
   * The actor never approves their own call.
   */
  async resolve(
    names: readonly string[],
    parties: { sender: AgentDoc; recipient: AgentDoc; actor: AgentDoc },
    ruleId: string,
    step: number,
  ): Promise<ApproverRef[]> {
    const refs: ApproverRef[] = [];
    const refuse = (why: string) =>
      new RelayError(
        'policy_denied',
        `Policy rule ${ruleId} needs approval, but ${why}; ask an admin to fix the policy or the card`,
        { rule_id: ruleId, approver: why },
      );
    const teammate = async (handle: string, source: string) => {
      const agent = await this.deps.teammates.get(handle);
      if (!agent || agent.status !== 'active')
        throw refuse(`approver ${source === handle ? handle : `${source} (${handle})`} is not an active teammate`);
      refs.push({ label: agent.handle, handle: agent.handle, slack_user_id: agent.slack_user_id, source, step });
    };
    for (const name of names) {
      if (/^[UW][A-Z0-9]{2,}$/.test(name)) {
        const agent = await this.deps.teammates.bySlackUser(name);
        refs.push({
          label: agent?.handle ?? name,
          handle: agent?.handle ?? null,
          slack_user_id: name,
          source: name,
          step,
        });
      } else if (name.startsWith('role:')) {
        const role = name.slice('role:'.length);
        const cards = await this.deps.teammates.list({ role });
        const others = cards.filter((c) => c.handle !== parties.actor.handle);
        if (others.length === 0)
          throw refuse(`approver ${name} names no active teammate${cards.length ? ' other than the caller' : ''}`);
        for (const card of others) await teammate(card.handle, name);
      } else if (name === 'recipient_lead' || name === 'sender_lead') {
        const party = name === 'recipient_lead' ? parties.recipient : parties.sender;
        if (!party.lead) throw refuse(`approver ${name}: ${party.handle} has no lead on their card`);
        await teammate(party.lead, name);
      } else {
        await teammate(name, name);
      }
    }
    const seen = new Set<string>();
    const unique = refs.filter((r) => r.handle !== parties.actor.handle && !seen.has(r.label) && seen.add(r.label));
    if (unique.length === 0) throw refuse(`nobody but the caller (${parties.actor.handle}) could approve it`);
    return unique;
  }

  /** Who `identity` (a handle or a Slack user id) votes as: the teammate and its linked Slack user, or the Slack user and its teammate. */
  async voterFor(identity: string): Promise<Voter> {
    if (/^[UW][A-Z0-9]{2,}$/.test(identity)) {
      const linked = await this.deps.teammates.bySlackUser(identity);
      return { slack_user_id: identity, handle: linked?.handle ?? null, label: linked?.handle ?? identity };
    }
    const agent = await this.deps.teammates.get(identity);
    if (!agent || agent.status !== 'active')
      throw new RelayError('invalid_params', `body.as: no active teammate with handle ${identity}`);
    return { handle: agent.handle, slack_user_id: agent.slack_user_id, label: agent.handle };
  }
}
