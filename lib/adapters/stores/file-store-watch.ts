import * as fs from 'node:fs';

/** How long a cluster file's change events must be quiet before the change is reported (a save is often two events). */
export const WATCH_SETTLE_MS = 100;

/**
 * The file store's watch: `onChange(name)` when `<name>.yaml` in `clustersDir` changed (once its events are quiet) or
 * an operator asked for a retry (`<stateDir>/<name>.retry`). Returns a stop function.
 */
export function watchClusterFiles(clustersDir: string, stateDir: string, onChange: (name: string) => void): () => void {
  // An editor's save is often a truncate and then a write: two events, and a read in between sees an empty file.
  // Each name is reported once its events have been quiet for WATCH_SETTLE_MS, so the read sees the saved bytes.
  const pending = new Map<string, NodeJS.Timeout>();
  const settle = (name: string) => {
    clearTimeout(pending.get(name));
    pending.set(
      name,
      setTimeout(() => {
        pending.delete(name);
        onChange(name);
      }, WATCH_SETTLE_MS),
    );
  };
  const watcher = fs.watch(clustersDir, { persistent: false }, (_event, file) => {
    const name = file ?? '';
    if (/\.ya?ml$/.test(name)) settle(name.replace(/\.ya?ml$/, ''));
  });
  // Retry requests: only `<name>.retry` files (the reconciler's own status writes must not wake it).
  fs.mkdirSync(stateDir, { recursive: true });
  const requests = fs.watch(stateDir, { persistent: false }, (_event, file) => {
    const name = file ?? '';
    if (/\.retry$/.test(name)) onChange(name.replace(/\.retry$/, ''));
  });
  return () => {
    watcher.close();
    requests.close();
    for (const t of pending.values()) clearTimeout(t);
    pending.clear();
  };
}
