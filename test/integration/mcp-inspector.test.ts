// The real stdio MCP server as seen by a third-party client: the MCP Inspector CLI (a pinned dev dependency, run
// through npx) spawns the built bin and lists its tools.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';

const ROOT = join(__dirname, '..', '..');
const STDIO = join(ROOT, 'dist/mcp/stdio.js');
const run = promisify(execFile);

const EXPECTED_TOOLS = [
  'handoff_to_teammate',
  'list_teammates',
  'check_inbox',
  'view_thread',
  'send_message',
  'accept_handoff',
  'complete_handoff',
  'decline_handoff',
  'draft_proposed_action',
];

let relay: TestRelay;
let apiKey: string;

beforeAll(async () => {
  relay = await startTestRelay({ name: 'mcp_inspector' });
  apiKey = await relay.register({ handle: 'inspector@acme' });
});

afterAll(async () => {
  await relay?.stop();
});

/** The CLI prints the tools/list result as JSON on stdout; tolerate anything printed around it. */
function parseToolsList(stdout: string): { tools: Array<{ name: string }> } {
  try {
    return JSON.parse(stdout);
  } catch {
    const start = stdout.indexOf('{');
    const end = stdout.lastIndexOf('}');
    if (start < 0 || end < start) throw new Error(`no JSON in the inspector output:\n${stdout}`);
    return JSON.parse(stdout.slice(start, end + 1));
  }
}

test('the MCP Inspector CLI lists the relay tools over stdio', async () => {
  const { stdout, stderr } = await run(
    'npx',
    ['--no-install', 'mcp-inspector', '--cli', '-e', `RELAY_URL=${relay.url}`, '-e', `RELAY_API_KEY=${apiKey}`, process.execPath, STDIO, '--method', 'tools/list'],
    {
      cwd: ROOT,
      timeout: 120_000,
      maxBuffer: 16 * 1024 * 1024,
      env: { ...process.env, npm_config_update_notifier: 'false' },
    },
  ).catch((error: { stdout?: string; stderr?: string; message: string }) => {
    throw new Error(`inspector failed: ${error.message}\nstdout:\n${error.stdout}\nstderr:\n${error.stderr}`);
  });
  let listed: { tools: Array<{ name: string }> };
  try {
    listed = parseToolsList(stdout);
  } catch (error) {
    throw new Error(`${(error as Error).message}\nstderr:\n${stderr}`);
  }
  const names = listed.tools.map((t) => t.name);
  expect([...names].sort()).toEqual([...EXPECTED_TOOLS].sort());
}, 180_000);
