// OAuth mode's installation store: one bot token per workspace (or per org for an org-wide install), in MongoDB.
import type { Installation, InstallationQuery, InstallationStore } from '@slack/bolt';
import type { Collection } from 'mongodb';

/**
 * One installation, keyed `T…` (a workspace) or `E…` (an org-wide install). The whole Installation Bolt hands over is
 * kept (token rotation's refresh token and expiry included, when the app has rotation on), so Bolt's authorize can
 * rotate it. An uninstall or revoked tokens mark the document (`uninstalled_at`) and drop its tokens.
 */
export interface SlackInstallationDoc {
  _id: string;
  team_id: string | null;
  enterprise_id: string | null;
  installation: Installation | null;
  installed_at: Date;
  uninstalled_at: Date | null;
  /** Why it was marked: `app_uninstalled` or `tokens_revoked`. */
  uninstall_reason?: string | null;
}

/** The key of an installation: the org for an org-wide install, else the workspace. */
export function installationKey(q: {
  teamId?: string | undefined;
  enterpriseId?: string | undefined;
  isEnterpriseInstall?: boolean;
}): string {
  if (q.isEnterpriseInstall && q.enterpriseId) return q.enterpriseId;
  if (q.teamId) return q.teamId;
  if (q.enterpriseId) return q.enterpriseId;
  throw new Error('slack installation: neither a team nor an enterprise id');
}

/** Thrown when a workspace has no (or no more) installation: permanent for the job that needed its token. */
export class SlackNotInstalledError extends Error {
  constructor(readonly key: string) {
    super(`Slack workspace ${key} has not installed the app (or uninstalled it / revoked its tokens)`);
    this.name = 'SlackNotInstalledError';
  }
}

export class MongoInstallationStore implements InstallationStore {
  constructor(private readonly docs: Collection<SlackInstallationDoc>) {}

  async storeInstallation<AuthVersion extends 'v1' | 'v2'>(
    installation: Installation<AuthVersion, boolean>,
  ): Promise<void> {
    const key = installationKey({
      teamId: installation.team?.id,
      enterpriseId: installation.enterprise?.id,
      isEnterpriseInstall: installation.isEnterpriseInstall ?? false,
    });
    // One write: a re-install (or a token rotation) replaces the tokens and clears an earlier uninstall.
    await this.docs.updateOne(
      { _id: key },
      {
        $set: {
          team_id: installation.team?.id ?? null,
          enterprise_id: installation.enterprise?.id ?? null,
          installation: installation as Installation,
          uninstalled_at: null,
          uninstall_reason: null,
        },
        $setOnInsert: { installed_at: new Date() },
      },
      { upsert: true },
    );
  }

  async fetchInstallation(query: InstallationQuery<boolean>): Promise<Installation<'v1' | 'v2', boolean>> {
    // An org-wide install answers for every workspace of its org.
    const keys = [query.isEnterpriseInstall ? undefined : query.teamId, query.enterpriseId].filter((k): k is string =>
      Boolean(k),
    );
    for (const key of keys) {
      const doc = await this.docs.findOne({ _id: key });
      if (doc?.installation && !doc.uninstalled_at) return doc.installation;
    }
    throw new SlackNotInstalledError(keys.join('/') || 'unknown');
  }

  async deleteInstallation(query: InstallationQuery<boolean>): Promise<void> {
    await this.markUninstalled(installationKey(query), 'deleted');
  }

  /** Marks an installation gone (its tokens dropped); safe to repeat. */
  async markUninstalled(key: string, reason: string): Promise<boolean> {
    const result = await this.docs.updateOne(
      { _id: key, uninstalled_at: null },
      { $set: { uninstalled_at: new Date(), uninstall_reason: reason, installation: null } },
    );
    return result.modifiedCount > 0;
  }

  /** Every live installation (the resolver asks each for a person it has not placed yet). */
  async live(): Promise<SlackInstallationDoc[]> {
    return this.docs.find({ uninstalled_at: null }).sort({ installed_at: 1 }).toArray();
  }
}
