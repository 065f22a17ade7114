/**
 * The test suite's check of the takes memory answers (takeMemory.ts, messageMemory.ts): with
 * HUB_TEST_VERIFY_TAKES=1 (vitest.config.ts) every such take also reads the file, and a difference is
 * recorded for test/support/setupFile.ts, which fails the test after which it was found. Not thrown: the
 * batch would roll back and run the take again from the file, hiding it; a hub in a process of its own
 * ends instead. Also counts the takes memory answered, for the tests to see that it did.
 */
import type { LoggedStateObject } from './takeMemory.js';
import type { TakeRow } from './takeRows.js';
import { exactOfAny, LOGGED_AT, loggedOf } from './takeRows.js';

export const verifyingTakes = process.env.HUB_TEST_VERIFY_TAKES === '1';

let answered = 0;
const differences: string[] = [];

/** A take was answered from memory. */
export const answeredFromMemory = (): void => {
  answered++;
};

/** Takes answered from memory in this process so far (every store's). */
export const takesFromMemory = (): number => answered;

/** The differences found since last asked. */
export const takeMemoryDifferences = (): string[] => differences.splice(0);

function differs(difference: string): void {
  differences.push(difference);
  console.error(difference);
  process.exit(70);
}

/**
 * A StateObject take from memory (`known`: its filters' names, the cursor, the unread objects) against
 * the file's first read of that take (`read`): the subscription exists, no delivery is pending, its
 * filters are those usual ones, all at the cursor, and they have not seen the same objects.
 */
export function verifyStateObjectTake(
  subscription: string,
  known: { names: string[]; cursor: number; rows: LoggedStateObject[] },
  read: TakeRow[],
): void {
  const names = new Map<number, string | undefined>();
  const unread = new Map<number, LoggedStateObject>();
  let agrees = read.length > 0 && read[0][9] === null;
  for (const row of read) {
    const [id, sentinel, pkg, , type, exactName, readSeq] = row;
    if (id === null) continue;
    names.set(id, exactOfAny({ sentinel, package: pkg, type, exactName }) ? (exactName as string) : undefined);
    if (readSeq !== known.cursor) agrees = false;
    if (row[LOGGED_AT + 8] !== null) unread.set(row[LOGGED_AT + 8] as number, loggedOf(row, LOGGED_AT));
  }
  const fileNames = [...names.values()];
  const fileRows = [...unread.values()].sort((a, b) => a.seq - b.seq);
  if (
    agrees &&
    fileNames.length === known.names.length &&
    known.names.every((n) => fileNames.includes(n)) &&
    JSON.stringify(fileRows) === JSON.stringify(known.rows)
  )
    return;
  differs(`take memory differs from the file for subscription ${subscription}: ${JSON.stringify({ known, read })}`);
}

/** A message take's read of the log from memory against the same read from the file. */
export function verifyMessageRead(subscription: string, fromMemory: unknown, fromFile: unknown): void {
  if (JSON.stringify(fromMemory) !== JSON.stringify(fromFile))
    differs(
      `message memory differs from the file for subscription ${subscription}: ${JSON.stringify({ fromMemory, fromFile })}`,
    );
}
