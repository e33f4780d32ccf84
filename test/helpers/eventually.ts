/** Calls `probe` every 50 ms until it holds (watches and events arrive asynchronously); fails saying `what` after `ms`. */
export async function eventually(probe: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await probe()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`not within ${ms} ms: ${what}`);
}
