// manifest.yml against Slack's published manifest JSON Schema (offline copy in test/fixtures), plus the app's own facts.

import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import type { App } from '@slack/bolt';
import { ACTION_IDS } from '../bot/blocks/handoff-dm';
import { registerListeners, type SlackAppDeps } from '../bot/slack-app';
import { CALLBACK_IDS } from '../bot/views/transition-modals';
import { slackAuthorizeUrl } from '../relay-core/http/slack-oidc';
import { REASSIGN_VIEW, TIMER_ACTION_IDS } from '../bot/blocks/timer-action-ids';
import { MESSAGE_SHORTCUT_CALLBACK_ID } from '../bot/views/new-handoff-modal';
import { REDIRECT_PATH, SLACK_BOT_SCOPES } from '../bot/oauth/install-flow';

const ROOT = join(__dirname, '..');
const SCHEMA_DIR = join(__dirname, 'fixtures', 'slack-manifest-schema');
const EVENTS_URL = 'https://relay.example.com/slack/events';

type Manifest = Record<string, any>;

function readJson(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(SCHEMA_DIR, file), 'utf8'));
}

/** Every remote `$ref` in the entry schema, e.g. https://raw.githubusercontent.com/.../manifest.schema.1.0.0.json. */
function remoteRefs(schema: unknown): string[] {
  const found = new Set<string>();
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      for (const [key, value] of Object.entries(v)) {
        if (key === '$ref' && typeof value === 'string' && /^https?:/.test(value)) found.add(value);
        else walk(value);
      }
    }
  };
  walk(schema);
  return [...found];
}

/**
 * The entry schema (manifest.schema.json, draft-07) picks a versioned schema by
 * `_metadata.major_version` and refers to it by URL; the local copies are registered under those
 * URLs so nothing is fetched. Slack's non-standard `regex` keyword is enforced, not ignored.
 */
function compileManifestValidator(): ValidateFunction {
  const entry = readJson('manifest.schema.json');
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addKeyword({
    keyword: 'regex',
    type: 'string',
    schemaType: 'string',
    validate: (pattern: string, data: string) => new RegExp(pattern).test(data),
  });
  for (const url of remoteRefs(entry)) {
    const file = url.slice(url.lastIndexOf('/') + 1);
    ajv.addSchema(readJson(file), url);
  }
  return ajv.compile(entry);
}

function describeErrors(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`).join('\n');
}

/** Bot scopes each Web API method needs (docs.slack.dev/reference/methods); views.* and auth.test need none. */
const METHOD_SCOPES: Record<string, string[]> = {
  'auth.test': [],
  'chat.postMessage': ['chat:write'],
  'chat.update': ['chat:write'],
  'chat.postEphemeral': ['chat:write'],
  'chat.delete': ['chat:write'],
  // An agent run's progress as one streamed reply (Slack's text streaming).
  'chat.startStream': ['chat:write'],
  'chat.appendStream': ['chat:write'],
  'chat.stopStream': ['chat:write'],
  'conversations.open': ['im:write'],
  // The slack queue reads its own DMs back (include_all_metadata) to find a post whose answer it lost.
  // In a bound channel (Claim cards) it reads the channel: channels:history (public), groups:history (private).
  'conversations.history': ['im:history', 'channels:history', 'groups:history'],
  'conversations.replies': ['im:history', 'channels:history', 'groups:history'],
  'users.info': ['users:read'],
  // The digest learns many people's time zones at once.
  'users.list': ['users:read'],
  // A message shortcut's permalink; chat.getPermalink needs no scope.
  'chat.getPermalink': [],
  'chat.unfurl': ['links:write'],
  'views.open': [],
  'views.update': [],
  'views.push': [],
  'views.publish': [],
};

/** Bot scopes each event subscription needs. */
const EVENT_SCOPES: Record<string, string[]> = {
  app_home_opened: [],
  link_shared: ['links:read'],
  app_uninstalled: [],
  tokens_revoked: [],
  'message.im': ['im:history'],
  app_mention: ['app_mentions:read'],
};

const WEB_API_FAMILIES = [
  'apps',
  'auth',
  'bookmarks',
  'bots',
  'chat',
  'conversations',
  'dnd',
  'files',
  'pins',
  'reactions',
  'team',
  'usergroups',
  'users',
  'views',
];
const WEB_API_CALL = new RegExp(`\\.(${WEB_API_FAMILIES.join('|')})\\.([a-zA-Z]+)\\(`, 'g');

/** Every Web API method the code under dir calls (client.chat.update(…) and the like), with where. */
function webApiCalls(dir: string): Map<string, string> {
  const found = new Map<string, string>();
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) {
        for (const m of readFileSync(path, 'utf8').matchAll(WEB_API_CALL)) {
          const method = `${m[1]}.${m[2]}`;
          if (!found.has(method)) found.set(method, relative(ROOT, path));
        }
      }
    }
  };
  walk(dir);
  return found;
}

interface Registered {
  actions: string[];
  views: string[];
  commands: string[];
  events: string[];
  shortcuts: string[];
}

/**
 * Runs the app's own registerListeners against a recorder standing in for the Bolt App, so ids added by any
 * listener module are seen. A listener registered by pattern or with a method the recorder does not know fails here.
 */
function recordRegistrations(): Registered {
  const seen: Registered = { actions: [], views: [], commands: [], events: [], shortcuts: [] };
  const idOf = (constraint: unknown, key: string): string => {
    if (typeof constraint === 'string') return constraint;
    const value =
      constraint && typeof constraint === 'object' ? (constraint as Record<string, unknown>)[key] : undefined;
    if (typeof value === 'string') return value;
    throw new Error(
      `a listener is registered by ${String(constraint)}; register literal ids so the manifest can be checked`,
    );
  };
  const record = (list: keyof Registered, key: string) => (constraint: unknown) => {
    seen[list].push(idOf(constraint, key));
  };
  const methods: Record<string, (constraint: unknown) => void> = {
    action: record('actions', 'action_id'),
    view: record('views', 'callback_id'),
    command: record('commands', 'command'),
    event: record('events', 'type'),
    shortcut: record('shortcuts', 'callback_id'),
    message: () => seen.events.push('message.im'),
    use: () => undefined,
    error: () => undefined,
  };
  const app = new Proxy(
    {},
    {
      get: (_target, name) => {
        const method = methods[String(name)];
        if (!method)
          throw new Error(
            `registerListeners used app.${String(name)}; teach test/manifest.test.ts what it means for the manifest`,
          );
        return method;
      },
    },
  ) as unknown as App;
  registerListeners(app, {} as SlackAppDeps);
  return seen;
}

const unique = (ids: string[]) => [...new Set(ids)].sort();

const manifestText = readFileSync(join(ROOT, 'manifest.yml'), 'utf8');
const manifest: Manifest = parse(manifestText);
const validate = compileManifestValidator();

function validationErrors(candidate: unknown): string {
  return validate(candidate) ? '' : describeErrors(validate.errors) || 'invalid';
}

describe('manifest.yml', () => {
  test('is valid against Slack’s manifest schema', () => {
    expect(validationErrors(manifest)).toBe('');
  });

  test('selects the version 1 schema explicitly', () => {
    expect(manifest._metadata).toMatchObject({ major_version: 1 });
  });

  test('declares /handoff with its usage, escaped mentions, on the Bolt endpoint; interactivity on the same endpoint', () => {
    const handoff = manifest.features.slash_commands.find((c: { command: string }) => c.command === '/handoff');
    expect(handoff).toEqual({
      command: '/handoff',
      url: EVENTS_URL,
      description: 'Hand work to a teammate',
      usage_hint: '[@someone or role:x text] | inbox | channel role:x | link | join CODE | invite | help',
      // `/handoff @someone …` arrives as <@U…>, a user id the command resolves to a teammate.
      should_escape: true,
    });
    expect(manifest.settings.interactivity).toEqual({ is_enabled: true, request_url: EVENTS_URL });
    expect(manifest.features.bot_user).toEqual({ display_name: 'handoff-relay', always_online: true });
  });

  test('Socket Mode is off by default (HTTP at /slack/events), and the comment says how to turn it on', () => {
    expect(manifest.settings.socket_mode_enabled).toBe(false);
    expect(manifestText).toMatch(/^#.*socket_mode_enabled: true/m);
  });

  test('tells the reader which host to put in place of relay.example.com', () => {
    expect(manifestText.split('\n')[0]).toMatch(/^#/);
    expect(manifestText).toMatch(/^#.*RELAY_PUBLIC_URL/m);
  });
});

describe('manifest.yml agrees with what the app registers and calls', () => {
  const registered = recordRegistrations();
  const declaredCommands = (manifest.features.slash_commands ?? []).map((c: { command: string }) => c.command).sort();
  const declaredEvents = [...(manifest.settings.event_subscriptions?.bot_events ?? [])].sort();
  const declaredShortcuts = (manifest.features.shortcuts ?? [])
    .map((s: { callback_id: string }) => s.callback_id)
    .sort();

  test('the recorder saw the DM buttons and modals (it is looking at the real registration)', () => {
    expect(registered.actions).toEqual(expect.arrayContaining(Object.values(ACTION_IDS)));
    expect(registered.views).toEqual(expect.arrayContaining(Object.values(CALLBACK_IDS)));
    // The timer notices' Snooze, Reassign and Resend, and the Reassign modal.
    expect(registered.actions).toEqual(expect.arrayContaining(Object.values(TIMER_ACTION_IDS)));
    expect(registered.views).toContain(REASSIGN_VIEW.callbackId);
  });

  test('every command registered is declared, and every declared command has a listener', () => {
    expect(declaredCommands).toEqual(unique(registered.commands));
  });

  test('every event listened to is subscribed, and every subscribed event has a listener', () => {
    expect(declaredEvents).toEqual(unique(registered.events));
  });

  test('buttons and modals need interactivity on, with a request URL unless Socket Mode', () => {
    if (registered.actions.length + registered.views.length + registered.shortcuts.length === 0) return;
    expect(manifest.settings.interactivity?.is_enabled).toBe(true);
    if (!manifest.settings.socket_mode_enabled) expect(manifest.settings.interactivity.request_url).toBe(EVENTS_URL);
  });

  test('the Home tab is enabled exactly when app_home_opened is handled', () => {
    expect(manifest.features.app_home.home_tab_enabled).toBe(registered.events.includes('app_home_opened'));
  });

  test('every shortcut registered is declared, and the other way round', () => {
    expect(declaredShortcuts).toEqual(unique(registered.shortcuts));
  });

  test('"Hand off this message" is a message shortcut with the callback id the modal builder exports', () => {
    expect(manifest.features.shortcuts).toContainEqual({
      name: 'Hand off this message',
      type: 'message',
      callback_id: MESSAGE_SHORTCUT_CALLBACK_ID,
      description: expect.any(String),
    });
  });

  test('"Add to Slack" asks for exactly the manifest’s bot scopes and returns to the redirect URL it declares', () => {
    expect([...SLACK_BOT_SCOPES].sort()).toEqual([...manifest.oauth_config.scopes.bot].sort());
    expect(manifest.oauth_config.redirect_urls).toContain(`${new URL(EVENTS_URL).origin}${REDIRECT_PATH}`);
    expect(registered.events).toEqual(expect.arrayContaining(['app_uninstalled', 'tokens_revoked']));
  });

  test('the manifest lists exactly the two pages Slack sends a browser back to: the install and the inbox sign-in', () => {
    expect(manifest.oauth_config.redirect_urls).toHaveLength(2);
  });

  test('inbox links unfurl: link_shared is handled, and unfurl_domains is the relay host the request URLs use', () => {
    expect(registered.events).toContain('link_shared');
    expect(manifest.features.unfurl_domains).toEqual([new URL(EVENTS_URL).host]);
  });

  test('the bot scopes are exactly the ones the code’s Web API calls, commands and events need', () => {
    const calls = webApiCalls(join(ROOT, 'bot'));
    const unknown = [...calls.keys()].filter((method) => !(method in METHOD_SCOPES));
    expect(unknown).toEqual([]); // a new Web API method: add it and its scopes to METHOD_SCOPES
    const needed = new Set<string>();
    for (const method of calls.keys()) for (const scope of METHOD_SCOPES[method]!) needed.add(scope);
    if (registered.commands.length) needed.add('commands');
    for (const event of registered.events)
      for (const scope of EVENT_SCOPES[event] ?? [`<scope of ${event}>`]) needed.add(scope);
    const explain = (scope: string) => {
      const why = [
        ...[...calls].filter(([m]) => METHOD_SCOPES[m]?.includes(scope)).map(([m, where]) => `${m} (${where})`),
        ...(scope === 'commands' && registered.commands.length ? ['slash commands'] : []),
        ...registered.events.filter((e) => EVENT_SCOPES[e]?.includes(scope)).map((e) => `event ${e}`),
      ];
      return `${scope} ← ${why.join(', ') || 'nothing in bot/ needs it'}`;
    };
    expect([...manifest.oauth_config.scopes.bot].sort().map(explain)).toEqual([...needed].sort().map(explain));
    // User scopes: only what Sign in with Slack asks for on the authorize URL (relay-core/http/slack-oidc.ts).
    const signIn = new URL(
      slackAuthorizeUrl(
        { clientId: '1.2', clientSecret: 'x', botToken: 'x' },
        { redirectUri: 'https://relay.example.com/inbox/slack/callback', state: 's', nonce: 'n' },
      ),
    );
    expect(manifest.oauth_config.scopes.user).toEqual(signIn.searchParams.get('scope')!.split(' '));
    expect(manifest.oauth_config.redirect_urls).toContain(signIn.searchParams.get('redirect_uri'));
  });
});
describe('the manifest validator', () => {
  const variant = (change: (m: Manifest) => void): Manifest => {
    const copy = structuredClone(manifest);
    change(copy);
    return copy;
  };

  test('rejects an unknown top-level key', () => {
    expect(validationErrors(variant((m) => (m.setings = {})))).toMatch(/additionalProperty.*setings/);
  });

  test('rejects bot scopes given as a string', () => {
    expect(validationErrors(variant((m) => (m.oauth_config.scopes.bot = 'chat:write')))).toMatch(
      /\/oauth_config\/scopes\/bot must be array/,
    );
  });

  test('rejects a slash command without its leading slash', () => {
    expect(validationErrors(variant((m) => (m.features.slash_commands[0].command = 'handoff')))).toMatch(
      /slash_commands\/0\/command/,
    );
  });

  test('enforces Slack’s regex keyword on background_color', () => {
    expect(validationErrors(variant((m) => (m.display_information.background_color = 'navy')))).toMatch(
      /\/display_information\/background_color must pass "regex" keyword/,
    );
  });
});
