import { afterEach, beforeEach, vi } from "vitest";
import { api } from "./request";

/**
 * 2030-03-10T12:00:00Z plus the given seconds. The fake clock runs ahead of the
 * real one: workerd schedules alarms by the real clock, and an alarm set in the
 * real past would fire at once.
 */
export const at = (seconds: number) => Date.UTC(2030, 2, 10, 12, 0, 0) + seconds * 1000;
export const setClock = (seconds: number) => vi.setSystemTime(at(seconds));

/** Runs `work` with Date held at one instant mid-minute, so no window turns during it; the real Date after. */
export async function inOneInstant<T>(work: () => Promise<T>): Promise<T> {
  vi.useFakeTimers({ toFake: ["Date"] });
  setClock(30);
  try {
    return await work();
  } finally {
    vi.useRealTimers();
  }
}

/** `count` requests of one caller, one after another. */
export async function send(key: string | null, count: number, path = "/v1/store/orders"): Promise<Response[]> {
  const responses: Response[] = [];
  for (let i = 0; i < count; i++) {
    responses.push(await api(path, { key }));
  }
  return responses;
}

export const statuses = (responses: Response[]) => responses.map((response) => response.status);

/** Every test of the file on a fake Date (the timers stay real: the runtime's I/O needs them), restored after each. */
export function onAFakeClock(): void {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["Date"] });
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });
}
