/** Resolves once `condition` holds, checking it every 10 ms (a test's timeout bounds the wait). */
export async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((r) => setTimeout(r, 10));
}
