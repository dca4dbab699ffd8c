// app_uninstalled and tokens_revoked: the workspace's installation is marked gone, so its deliveries stop for good.
import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from '@slack/bolt';
import type { Logger } from 'pino';
import { installationKey, type MongoInstallationStore } from '../../oauth/mongo-installation-store';

export interface UninstallDeps {
  log: Logger;
  /** OAuth mode's installations; unset in single-token mode, where the operator owns the one token. */
  installations?: MongoInstallationStore;
}

type Authorization = { team_id?: string | null; enterprise_id?: string | null; is_enterprise_install?: boolean };
type Body = Authorization & { authorizations?: Authorization[] };

/**
 * The installation an event is about: Slack says it in the envelope's `authorizations` (an org-wide install's names
 * the org and no team), as Bolt reads it; the top-level ids otherwise.
 */
function keyOf(body: Body): string {
  const auth = body.authorizations?.[0];
  return installationKey({
    teamId: auth?.team_id ?? body.team_id ?? undefined,
    enterpriseId: (auth?.enterprise_id ?? body.enterprise_id) || undefined,
    isEnterpriseInstall: auth?.is_enterprise_install ?? body.is_enterprise_install ?? false,
  });
}

export function appUninstalled({ log, installations }: UninstallDeps) {
  return async ({ body }: SlackEventMiddlewareArgs<'app_uninstalled'> & AllMiddlewareArgs): Promise<void> => {
    const key = keyOf(body as Body);
    if (!installations) {
      log.warn({ workspace: key }, 'slack app uninstalled from the workspace; SLACK_BOT_TOKEN no longer works');
      return;
    }
    const marked = await installations.markUninstalled(key, 'app_uninstalled');
    log.warn({ workspace: key, marked }, 'slack app uninstalled: deliveries to this workspace stop');
  };
}

export function tokensRevoked({ log, installations }: UninstallDeps) {
  return async ({ body, event }: SlackEventMiddlewareArgs<'tokens_revoked'> & AllMiddlewareArgs): Promise<void> => {
    // Only the bot token matters to the relay (it asks for no user tokens).
    if (!event.tokens.bot?.length) return;
    const key = keyOf(body as Body);
    if (!installations) {
      log.warn({ workspace: key }, 'slack bot token revoked; SLACK_BOT_TOKEN no longer works');
      return;
    }
    const marked = await installations.markUninstalled(key, 'tokens_revoked');
    log.warn({ workspace: key, marked }, 'slack bot token revoked: deliveries to this workspace stop');
  };
}
