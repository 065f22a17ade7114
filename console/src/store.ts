/** A value that pages render and long-poll loops update: the smallest observable the console needs. */
import { useEffect, useReducer } from 'preact/hooks';

export class Store<T> {
  private readonly listeners = new Set<() => void>();
  constructor(private current: T) {}

  get value(): T {
    return this.current;
  }

  set(value: T): void {
    this.current = value;
    for (const listener of this.listeners) listener();
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** Re-renders the component whenever the store changes. */
export function useStore<T>(store: Store<T>): T {
  const [, changed] = useReducer((n: number) => n + 1, 0);
  useEffect(() => store.subscribe(() => changed(0)), [store]);
  return store.value;
}
