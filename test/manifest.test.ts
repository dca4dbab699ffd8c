// manifest.yml against Slack's published manifest JSON Schema (offline copy in test/fixtures), plus the app's own facts.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import { HANDOFF_COMMAND } from '../bot/listeners/commands/handoff-command';

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

  test('asks for exactly the bot scopes the relay needs', () => {
    // im:history: the slack queue reads its own DM back to find a post whose answer it never got (exactly-once).
    expect([...manifest.oauth_config.scopes.bot].sort()).toEqual(['chat:write', 'commands', 'im:history', 'im:write', 'users:read']);
    expect(manifest.oauth_config.scopes.user).toBeUndefined();
  });

  test('declares /handoff and interactivity on the Bolt endpoint, and only the commands the app registers', () => {
    expect(manifest.features.slash_commands.map((c: { command: string }) => c.command)).toEqual([HANDOFF_COMMAND]);
    expect(manifest.settings.event_subscriptions).toBeUndefined(); // the app listens to no events yet
    const handoff = manifest.features.slash_commands.find((c: { command: string }) => c.command === '/handoff');
    expect(handoff).toEqual({
      command: '/handoff',
      url: EVENTS_URL,
      description: 'Hand work to a teammate',
      usage_hint: 'help',
      should_escape: false,
    });
    expect(manifest.settings.interactivity).toEqual({ is_enabled: true, request_url: EVENTS_URL });
    expect(manifest.features.app_home).toEqual({
      home_tab_enabled: false,
      messages_tab_enabled: true,
      messages_tab_read_only_enabled: false,
    });
    expect(manifest.features.bot_user).toEqual({ display_name: 'handoff-relay', always_online: true });
  });

  test('tells the reader which host to put in place of relay.example.com', () => {
    expect(manifestText.split('\n')[0]).toMatch(/^#/);
    expect(manifestText).toMatch(/^#.*RELAY_PUBLIC_URL/m);
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
    expect(validationErrors(variant((m) => (m.oauth_config.scopes.bot = 'chat:write')))).toMatch(/\/oauth_config\/scopes\/bot must be array/);
  });

  test('rejects a slash command without its leading slash', () => {
    expect(validationErrors(variant((m) => (m.features.slash_commands[0].command = 'handoff')))).toMatch(/slash_commands\/0\/command/);
  });

  test('enforces Slack’s regex keyword on background_color', () => {
    expect(validationErrors(variant((m) => (m.display_information.background_color = 'navy')))).toMatch(
      /\/display_information\/background_color must pass "regex" keyword/,
    );
  });
});
