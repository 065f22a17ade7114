import { hubError } from '../../errors.js';

/** Caps the long-polls waiting at once per credential, so one client cannot hold every socket. */
export class PollGate {
  private readonly waiting = new Map<string, number>();

  constructor(private readonly maxPerCredential: number) {}

  /** Takes a slot of `credential`, or throws 429 when all its slots are taken; `leave` gives it back. */
  enter(credential: string): void {
    const count = this.waiting.get(credential) ?? 0;
    if (count >= this.maxPerCredential) {
      throw hubError('TooManyPolls', { credential, count });
    }
    this.waiting.set(credential, count + 1);
  }

  leave(credential: string): void {
    const left = (this.waiting.get(credential) ?? 1) - 1;
    if (left > 0) this.waiting.set(credential, left);
    else this.waiting.delete(credential);
  }
}
