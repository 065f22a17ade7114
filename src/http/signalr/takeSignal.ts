import type { ClientSignal } from '../../hub/polls/clientSignal.js';

/** A poll's signal the connection controls: aborted to stop waiting, told when the answer is settled. */
export class TakeSignal implements ClientSignal {
  aborted = false;
  private listeners: EventListenerObject[] = [];
  private answered: ((sent: boolean) => void) | undefined;

  addEventListener(_type: 'abort', listener: EventListenerObject): void {
    if (!this.aborted && !this.listeners.includes(listener)) this.listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: EventListenerObject): void {
    this.listeners = this.listeners.filter((l) => l !== listener);
  }

  whenAnswered(listener: (sent: boolean) => void): void {
    this.answered = listener;
  }

  settle(sent: boolean): void {
    const answered = this.answered;
    this.answered = undefined;
    answered?.(sent);
  }

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    const listeners = this.listeners;
    this.listeners = [];
    const event = new Event('abort');
    for (const listener of listeners) listener.handleEvent(event);
  }
}
