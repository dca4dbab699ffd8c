// One task at a time per key, in arrival order: a process's own writers of one document wait their turn instead of
// colliding on its next version and backing off (other processes' writers are met by the conditional replace).

export class KeyedQueue {
  /** The last task queued per key, settled either way; a key with nothing queued is not kept. */
  private readonly tails = new Map<string, Promise<void>>();

  /** True when nothing is queued for `key`: a task run now starts after no other of this process's tasks for it. */
  isIdle(key: string): boolean {
    return !this.tails.has(key);
  }

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const result = (this.tails.get(key) ?? Promise.resolve()).then(task);
    const tail = result.then(
      () => {},
      () => {},
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }
}
