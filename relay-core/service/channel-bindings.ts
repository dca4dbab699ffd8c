// Channel bindings: which Slack channel an unclaimed handoff to a role, skill or owner target is posted in.
import type { Clock } from '../domain/clock';
import type { ChannelBindingDoc } from '../domain/documents';
import { RelayError } from '../domain/errors';
import { parseRecipient } from '../domain/schemas';
import type { ChannelBindingRecords } from '../store/channel-binding-records';

/** How many bindings `list` returns; a workspace binds a handful of teams. */
const LISTED = 200;

/** A Slack channel id (public C…, private G…); DMs (D…) cannot be bound. */
const CHANNEL_ID = /^[CG][A-Z0-9]{2,30}$/;

export class ChannelBindings {
  constructor(
    private readonly bindings: ChannelBindingRecords,
    private readonly clock: Clock,
  ) {}

  /** The target's spelling as stored (`role:frontend`), or invalid_params saying what a target looks like. */
  static target(raw: string): string {
    const parsed = parseRecipient(raw.trim());
    if ('error' in parsed)
      throw new RelayError(
        'invalid_params',
        `target: ${parsed.error.replace(/^must be a handle like name@team, or /, 'must be ')}`,
      );
    if (parsed.kind === 'handle')
      throw new RelayError(
        'invalid_params',
        'target: a channel takes handoffs to role:<role>, skill:<skill> or owner:<path>, not to one person',
      );
    return parsed.label;
  }

  /** The binding of one target: one `_id` read. */
  get(target: string): Promise<ChannelBindingDoc | null> {
    return this.bindings.get(target);
  }

  /** Binds (or re-binds) the target to a channel; the previous channel, if another one. */
  async bind(target: string, channel: string, by: string): Promise<{ previous: string | null }> {
    if (!CHANNEL_ID.test(channel))
      throw new RelayError('invalid_params', 'channel: run this in a public or private channel (not a DM)');
    const previous = await this.get(target);
    await this.bindings.put({ _id: target, target, channel, bound_by: by, at: this.clock.now() });
    return { previous: previous && previous.channel !== channel ? previous.channel : null };
  }

  /** Removes the binding; false when there was none. */
  async unbind(target: string): Promise<boolean> {
    return this.bindings.remove(target);
  }

  /** Every binding, by target (an operator's command: the collection is small, so a read of all of it is fine). */
  list(): Promise<ChannelBindingDoc[]> {
    return this.bindings.list(LISTED);
  }
}
