/** How the rest of the Worker reaches a lane, and the delivery ids owners see, without importing the object. */
import type { LaneDelivery } from "./lane-deliveries";
import { noticeIdOf } from "./endpoint-notices";

/** An endpoint's lane: one Durable Object per endpoint, named by its id. */
export const laneOf = (env: Env, endpointId: string) => env.WEBHOOK_LANES.getByName(endpointId);

/** A delivery as its endpoint's owner sees it in the deliveries list. */
export interface DeliveryView {
  id: string;
  eventId: string;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  /** A fifo endpoint's pending delivery behind the oldest pending one: that one's event id; null otherwise. */
  heldBehind: string | null;
  outcome: LaneDelivery["outcome"];
  createdAt: string;
  attemptLog: {
    at: string;
    status: number | null;
    durationMs: number;
    response: string | null;
    error: string | null;
  }[];
}

/** The id of what a lane's delivery sends: an order event's (its sequence) or a notice's (its negated id). */
export const eventIdOf = (seq: number) => (seq < 0 ? noticeIdOf(-seq) : `evt_${seq}`);

/** A delivery's id: one per endpoint and event. */
export const deliveryIdOf = (endpointId: string, seq: number | string) => `wd_${endpointId.slice("we_".length)}_${seq}`;
/** The event a delivery's id names. */
export const seqOfDeliveryId = (deliveryId: string) => Number(deliveryId.slice(deliveryId.lastIndexOf("_") + 1));
