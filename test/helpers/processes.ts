// Whether a process is still there, for tests that check what a command leaves running.

/** True while process `pid` exists (signal 0 only checks). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
