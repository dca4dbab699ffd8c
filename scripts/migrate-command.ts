// `handoff-relay migrate`: brings the database up to this version's layout without serving (start does it too).
import { loadConfig } from '../relay-core/ops/config';
import { MongoStore } from '../relay-core/store/mongo-store';
import { migrateStore, SCHEMA_VERSION } from '../relay-core/store/migrate';
import { storeUrl } from './start-command';

export interface MigrateCommandDeps {
  env: NodeJS.ProcessEnv;
  say: (line: string) => void;
}

/** Brings the database up to this version's layout (start does the same before it serves). */
export async function migrateCommand({ env, say }: MigrateCommandDeps): Promise<void> {
  const config = loadConfig(env);
  const stops: Array<() => Promise<void>> = [];
  try {
    const store = await MongoStore.connect(await storeUrl(config, stops, say), config.mongodbDb);
    stops.unshift(() => store.close());
    const touched = await migrateStore(store, say);
    await store.ensureIndexes();
    say(
      touched === 0
        ? `migrate: nothing to do (layout ${SCHEMA_VERSION})`
        : `migrate: done, ${touched.toLocaleString('en')} threads updated`,
    );
  } finally {
    for (const stop of stops) await stop();
  }
}
