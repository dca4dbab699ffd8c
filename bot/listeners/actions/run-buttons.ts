// Hand to my agent and Stop: the recipient's runner takes the handoff (accepting it first when pending, through the
// same `verify` job as Accept) or ends the agent; refusals are explained to whoever clicked.
import { RelayError } from '../../../relay-core/domain/errors';
import { isFinishedRun } from '../../../relay-core/domain/run';
import type { Relay } from '../../../relay-core/service/relay-service';
import { enqueueSlackAccept, type AcceptButtonDeps } from './accept-button';
import { checkClick, explain, type ButtonArgs } from './button-click';

export type RunButtonDeps = AcceptButtonDeps & Pick<Relay, 'runs'>;

export function handToAgentButton(deps: RunButtonDeps) {
  const { runs } = deps;
  return async (args: ButtonArgs): Promise<void> => {
    await args.ack();
    const click = await checkClick(deps, args, {
      who: 'recipient',
      verb: 'hand to your agent',
      from: ['pending', 'accepted'],
    });
    if (!click) return;
    if (click.thread.status === 'accepted') {
      try {
        await runs.request(click.actor, click.thread._id, 'slack');
      } catch (error) {
        if (!(error instanceof RelayError)) throw error;
        await explain(args, `Not handed to your agent: ${error.message}. Nothing was changed.`);
      }
      return;
    }
    // Pending: the accept (and its verdict) runs as the Accept button's job does, then the run is queued there.
    await enqueueSlackAccept(deps, args, click, { button: 'Hand to my agent', run: true });
  };
}

export function stopAgentButton(deps: Pick<Relay, 'reads' | 'teammates' | 'runs'>) {
  const { runs } = deps;
  return async (args: ButtonArgs): Promise<void> => {
    await args.ack();
    const click = await checkClick(deps, args, { who: 'recipient', verb: 'stop the agent on', from: ['accepted'] });
    if (!click) return;
    const run = click.thread.run;
    if (!run || isFinishedRun(run.status)) {
      await explain(args, 'Your agent is not running this handoff any more; nothing was changed.');
      return;
    }
    try {
      await runs.stop(click.actor, run.id, 'slack');
    } catch (error) {
      if (!(error instanceof RelayError)) throw error;
      await explain(args, `Not stopped: ${error.message}.`);
    }
  };
}
