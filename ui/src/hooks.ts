import { useCallback, useEffect, useState } from "preact/hooks";
import { ApiError } from "./api.ts";

export interface Loaded<T> {
  data: T | null;
  error: string | null;
  reload: () => void;
}

/**
 * Loads with `load` whenever `key` changes, and again every `refreshMs` if given (the delivery
 * log follows deliveries as they happen). A failure is kept as a message to show.
 */
export function useLoad<T>(load: () => Promise<T>, key: string, refreshMs?: number): Loaded<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  const reload = useCallback(() => {
    setTick((value) => value + 1);
  }, []);

  useEffect(() => {
    setData(null);
    setError(null);
  }, [key]);

  useEffect(() => {
    let current = true;
    load().then(
      (value) => {
        if (!current) return;
        setData(value);
        setError(null);
      },
      (failure: unknown) => {
        if (current) setError(messageOf(failure));
      },
    );
    return () => {
      current = false;
    };
  }, [key, tick]);

  useEffect(() => {
    if (refreshMs === undefined) return undefined;
    const timer = setInterval(reload, refreshMs);
    return () => {
      clearInterval(timer);
    };
  }, [key, refreshMs]);

  return { data, error, reload };
}

export function messageOf(failure: unknown): string {
  if (failure instanceof ApiError) return failure.message;
  return failure instanceof Error ? failure.message : String(failure);
}

/** The current location's fragment, followed as it changes. */
export function useHash(): string {
  const [hash, setHash] = useState(window.location.hash);
  useEffect(() => {
    const onChange = (): void => {
      setHash(window.location.hash);
    };
    window.addEventListener("hashchange", onChange);
    return () => {
      window.removeEventListener("hashchange", onChange);
    };
  }, []);
  return hash;
}
