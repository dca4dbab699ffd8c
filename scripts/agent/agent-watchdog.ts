// What `handoff-relay agent` spawns for each run: the leader of the run's process group, which starts the agent in
// that group and ends the whole group when the runner that started it is gone (killed, out of memory), so an agent
// never outlives its runner and goes on working while another runner takes the run over. Usage:
//   node agent-watchdog.js RUNNER_PID COMMAND [ARGS…]
// Its exit is the agent's: the same code, or the same signal. Stop and the time limit still end the whole group
// from the runner; this process ignores SIGTERM so that it outlives the agent it is waiting for.
import { spawn } from 'node:child_process';

const CHECK_EVERY_MS = 500;
const KILL_GRACE_MS = 5_000;

const [runnerPid, command, ...args] = process.argv.slice(2);
if (!runnerPid || !command) {
  process.stderr.write('usage: agent-watchdog RUNNER_PID COMMAND [ARGS…]\n');
  process.exit(2);
}

process.on('SIGTERM', () => {});
const agent = spawn(command, args, { stdio: 'inherit', shell: false });
agent.once('error', (error) => {
  process.stderr.write(`the runner could not start ${command}: ${error.message}\n`);
  process.exit(127);
});
agent.once('exit', (code, signal) => {
  if (signal) {
    process.removeAllListeners('SIGTERM');
    process.kill(process.pid, signal);
  }
  process.exit(code ?? 1);
});

// The runner is gone once this process is someone else's child (init or a subreaper adopts it).
const watch = setInterval(() => {
  if (String(process.ppid) === runnerPid) return;
  clearInterval(watch);
  // Nobody reads the runner's pipes any more: say nothing (a write would fail), end the group.
  const group = -process.pid;
  try {
    process.kill(group, 'SIGTERM');
  } catch {
    // nothing left in the group
  }
  setTimeout(() => {
    try {
      process.kill(group, 'SIGKILL');
    } catch {
      // gone
    }
  }, KILL_GRACE_MS).unref();
}, CHECK_EVERY_MS);
watch.unref();
