// The real stdio MCP server as seen by a third-party client: the MCP Inspector CLI (run through npx, pinned, in an
// empty temp directory so it neither resolves nor touches this project's package.json / node_modules) lists tools.
// Not a dev dependency: inspector 2.x brings vite 8, whose optional dependency napi-windows-process-start-time
// this machine's npm registry does not serve, and `npm ci` then refuses the lock file.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { MCP_TOOL_NAMES } from '../helpers/mcp-tool-names';

const ROOT = join(__dirname, '..', '..');
const STDIO = join(ROOT, 'dist/mcp/stdio.js');
const INSPECTOR = '@modelcontextprotocol/inspector@2.12.0';
const run = promisify(execFile);

let relay: TestRelay;
let apiKey: string;
let cwd: string;

beforeAll(async () => {
  relay = await startTestRelay({ name: 'mcp_inspector' });
  apiKey = await relay.register({ handle: 'inspector@acme' });
  cwd = await mkdtemp(join(tmpdir(), 'handoff-inspector-'));
});

afterAll(async () => {
  await relay?.stop();
  if (cwd) await rm(cwd, { recursive: true, force: true });
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
    [
      '-y',
      INSPECTOR,
      '--cli',
      '-e',
      `RELAY_URL=${relay.url}`,
      '-e',
      `RELAY_API_KEY=${apiKey}`,
      process.execPath,
      STDIO,
      '--method',
      'tools/list',
    ],
    {
      cwd,
      timeout: 120_000,
      maxBuffer: 16 * 1024 * 1024,
      env: {
        ...process.env,
        npm_config_yes: 'true',
        npm_config_update_notifier: 'false',
        npm_config_fund: 'false',
        npm_config_audit: 'false',
      },
    },
  ).catch((error: { stdout?: string; stderr?: string; message: string }) => {
    throw new Error(`inspector failed: ${error.message}\nstdout:\n${error.stdout}\nstderr:\n${error.stderr}`);
  });
  let listed: { tools: Array<{ name: string }> };
  try {
    listed = parseToolsList(stdout);
  } catch (error) {
    throw new Error(`${(error as Error).message}\nstderr:\n${stderr}`, { cause: error });
  }
  const names = listed.tools.map((t) => t.name);
  expect([...names].sort()).toEqual([...MCP_TOOL_NAMES]);
}, 180_000);
