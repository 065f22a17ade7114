/**
 * A StateObject filter as the wire gives it, over the four keys: `*` stands for any run of characters
 * (none included) and every other character, `?` and `[` too, for itself (src/wildcard.ts). Each engine
 * evaluates these in its own terms and gives stored filters back in this form.
 */
export interface StateObjectPatterns {
  sentinel: string;
  package: string;
  name: string;
  type: string;
}
