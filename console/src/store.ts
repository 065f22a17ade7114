/** A value that pages render and long-poll loops update: the smallest observable the console needs. */
import { useLayoutEffect, useReducer } from 'preact/hooks';

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

/**
 * Re-renders the component whenever the store changes. A change between the render and the
 * subscription (effects run after paint) is caught by comparing with the value that was rendered.
 */
export function useStore<T>(store: Store<T>): T {
  const [, changed] = useReducer((n: number) => n + 1, 0);
  const value = store.value;
  useLayoutEffect(() => {
    const unsubscribe = store.subscribe(() => changed(0));
    if (store.value !== value) changed(0);
    return unsubscribe;
    // Subscribing once per store is enough: `value` only tells what the first render showed.
  }, [store]);
  return value;
}
