// `handoff-relay --help`, `<command> --help|-h` and `help <command>` (the built CLI, its own process) in a clean
// environment: no RELAY_* variables, no relay running; and what an unknown command or option answers.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const CLI = join(__dirname, '..', '..', 'dist', 'scripts', 'cli.js');

const COMMANDS = [
  'start',
  'migrate',
  'register',
  'invite',
  'join',
  'deliveries',
  'policy',
  'approvals',
  'agent',
  'rotate-key',
  'audit',
];

/** The CLI with only PATH set, from a folder with no key file or config in it. */
async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run('node', [CLI, ...args], { env: { PATH: process.env.PATH! }, cwd: '/' });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

test('handoff-relay --help, -h, help and no arguments list every command', async () => {
  for (const args of [['--help'], ['-h'], ['help'], []]) {
    const answer = await cli(...args);
    expect(answer).toMatchObject({ code: 0, stderr: '' });
    for (const command of COMMANDS) expect(answer.stdout).toMatch(new RegExp(`^  ${command} +\\S`, 'm'));
  }
});

test.each(COMMANDS)(
  '%s: --help, -h and `help <command>` print usage, options and examples with no configuration',
  async (command) => {
    const answers = await Promise.all([cli(command, '--help'), cli(command, '-h'), cli('help', command)]);
    for (const answer of answers) {
      expect(answer).toMatchObject({ code: 0, stderr: '' });
      expect(answer.stdout).toContain(`Usage:\n  handoff-relay ${command}`);
      expect(answer.stdout).toContain('Options:\n');
      expect(answer.stdout).toContain('-h, --help');
      expect(answer.stdout).toMatch(new RegExp(`Examples:\\n  .*handoff-relay ${command}`));
    }
    expect(answers[1]!.stdout).toBe(answers[0]!.stdout);
    expect(answers[2]!.stdout).toBe(answers[0]!.stdout);
  },
);

test('--help wins over other arguments, before any key is asked for', async () => {
  const agent = await cli('agent', 'stop', 'r1', '--help');
  expect(agent).toMatchObject({ code: 0, stderr: '' });
  expect(agent.stdout).toContain('handoff-relay agent stop RUN_ID');
  expect((await cli('policy', 'test', '--action', 'x', '-h')).stdout).toContain('--artifacts T,T');
});

test('an unknown option names the closest valid one and where the help is', async () => {
  expect(await cli('register', '--handel', 'a@b')).toMatchObject({
    code: 1,
    stderr: expect.stringContaining(
      'register: unknown option --handel; did you mean --handle? (handoff-relay register --help)',
    ),
  });
  expect((await cli('agent', '--confg', 'x.yaml')).stderr).toContain('did you mean --config?');
  expect((await cli('audit', '--limt', '5')).stderr).toContain('did you mean --limit?');
  expect((await cli('policy', 'test', '--acton', 'handoff.create')).stderr).toContain('did you mean --action?');
  expect((await cli('approvals', 'list', '--statu', 'pending')).stderr).toContain('did you mean --status?');
  expect((await cli('migrate', '--hlep')).stderr).toContain('did you mean --help?');
});

test('the options a command needs are named together when several are missing, with where the help is', async () => {
  expect(await cli('register', '--handle', 'alice@acme')).toMatchObject({
    code: 1,
    stderr: expect.stringContaining('register: --name and --role are required (handoff-relay register --help)'),
  });
  expect((await cli('register')).stderr).toContain('register: --handle, --name and --role are required');
  expect((await cli('register', '--handle', 'a@acme', '--role', 'qa')).stderr).toContain(
    'register: --name is required (handoff-relay register --help)',
  );
});

test('an unknown command names the closest one; help for it does too', async () => {
  expect(await cli('registr')).toMatchObject({
    code: 1,
    stderr: expect.stringContaining('unknown command "registr"; did you mean register?'),
  });
  expect((await cli('help', 'rotate')).stderr).toContain('did you mean rotate-key?');
  expect((await cli('approvals', 'aprove', 'x')).stderr).toContain('did you mean approve?');
});
