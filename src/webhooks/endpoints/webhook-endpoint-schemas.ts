import { z } from "zod";
import { ORDER_EVENT_TYPES } from "../../events/order-event-schemas";
import { ENDPOINT_NOTICE_TYPES } from "../../webhook-delivery/endpoint-notices";
import { MAX_WEBHOOK_URL_LENGTH } from "./webhook-url";

/** The order events' types, and the notices of another endpoint failing (docs/api.md#failing-endpoints). */
const EventTypes = z.array(z.enum([...ORDER_EVENT_TYPES, ...ENDPOINT_NOTICE_TYPES])).min(1);

/** The fastest rate an owner may ask an endpoint's deliveries to be paced at. */
export const MAX_RATE_LIMIT = 1_000;
const RateLimit = z
  .number()
  .int()
  .min(1)
  .max(MAX_RATE_LIMIT)
  .nullable()
  .describe(
    "Deliveries a second at most: beyond it they wait their turn, none is dropped; null for no limit but the " +
      "endpoint's lane (six at once)",
  );

/** How an endpoint receives its deliveries (docs/api.md#webhook-endpoints). */
export const Ordering = z.enum(["concurrent", "fifo"]);

/** How an endpoint's deliveries are signed (docs/api.md#receiving-webhooks). */
export const Signing = z.enum(["hmac", "ed25519"]);

/** An Ed25519 public key as Standard Webhooks writes it: `whpk_` and the base64 of its 32 bytes. */
const PublicKey = z.string().regex(/^whpk_[A-Za-z0-9+/]{43}=$/);

export const CreateWebhookEndpoint = z
  .strictObject({
    url: z
      .string()
      .meta({ maxLength: MAX_WEBHOOK_URL_LENGTH })
      .describe(
        "Where to POST the events: https to a host on the public internet (while the service runs locally, any https " +
          "host or http to localhost), no credentials",
      ),
    types: EventTypes.optional().describe(
      "The event types to deliver; every order event's type when left out. The webhook_endpoint.* notices of the " +
        "account's other endpoints failing only when named",
    ),
    rateLimit: RateLimit.optional(),
    ordering: Ordering.optional().describe(
      "concurrent (the default): up to six deliveries at once, in no promised order; fifo: one at a time, in event " +
        "order, a failing one holding the later ones behind it until it is delivered or given up",
    ),
    signing: Signing.optional().describe(
      "hmac (the default): deliveries signed v1 with a secret you hold; ed25519: signed v1a with a key pair, of " +
        "which you hold only the public key",
    ),
  })
  .meta({ id: "CreateWebhookEndpoint" });

export const UpdateWebhookEndpoint = z
  .strictObject({
    url: z
      .string()
      .meta({ maxLength: MAX_WEBHOOK_URL_LENGTH })
      .optional()
      .describe("A new URL, checked as a new endpoint's is"),
    types: EventTypes.optional().describe("The event types to deliver from now on"),
    status: z
      .enum(["enabled", "disabled"])
      .optional()
      .describe(
        "disabled: nothing is delivered until it is enabled again; enabled: deliveries resume with the next event " +
          "(not for an endpoint an operator disabled)",
      ),
    rateLimit: RateLimit.optional(),
    ordering: Ordering.optional().describe("concurrent or fifo, from the next delivery on"),
    confirmUrl: z
      .string()
      .meta({ maxLength: MAX_WEBHOOK_URL_LENGTH })
      .optional()
      .describe(
        "The endpoint's URL (the new one, with url): needed to enable an endpoint disabled because a leaked key made " +
          "or changed it, else 409 webhook_url_unconfirmed",
      ),
  })
  .refine(
    (body) => Object.keys(body).some((name) => name !== "confirmUrl"),
    "send at least one of url, types, status and rateLimit",
  )
  .meta({ id: "UpdateWebhookEndpoint", minProperties: 1 });

export const WebhookEndpoint = z
  .object({
    id: z.string().regex(/^we_[0-9a-f]{20}$/),
    url: z.string(),
    types: EventTypes.describe("The event types delivered"),
    status: z
      .enum(["enabled", "disabled"])
      .describe(
        "disabled: nothing is delivered (by its owner, an operator, or the service: its receiver answered 410, or " +
          "every attempt failed for WEBHOOK_DISABLE_AFTER, 5 days unless the deployment says otherwise)",
      ),
    disabledBy: z
      .enum(["owner", "service", "operator"])
      .nullable()
      .describe(
        "Who disabled it: its owner or the service (either may be enabled again with PATCH), or an operator (only an " +
          "operator enables it); null while enabled",
      ),
    disabledReason: z.string().nullable().describe("Why, as its owner is told; null while enabled"),
    disabledForLeakedKey: z
      .string()
      .nullable()
      .describe(
        "Set when the service disabled it because the key that made it, or last changed its URL, secret " +
          "or types, was " +
          "revoked as leaked: enable it again with confirmUrl",
      ),
    failingSince: z.iso
      .datetime()
      .nullable()
      .describe(
        "Since when every attempt has failed, set once a second round of attempts in a row fails (it is told to " +
          "the account's endpoints that name webhook_endpoint.failing, and disabled if it goes on); null while " +
          "deliveries succeed",
      ),
    lastDeliveredAt: z.iso.datetime().nullable().describe("When a delivery last succeeded; null before the first"),
    rateLimit: RateLimit,
    ordering: Ordering.describe("fifo: one delivery at a time, in event order; concurrent: up to six at once"),
    signing: Signing.describe("hmac: signed v1 with the secret; ed25519: signed v1a, verified with publicKey"),
    publicKey: PublicKey.nullable().describe(
      "The Ed25519 public key deliveries are verified with (after a rotation, the new one); null for hmac",
    ),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: "WebhookEndpoint", description: "Where an account's order events are delivered." });

export const CreatedWebhookEndpoint = WebhookEndpoint.extend({
  secret: z
    .string()
    .regex(/^whsec_[A-Za-z0-9+/]{43}=$/)
    .optional()
    .describe(
      "The signing secret of an hmac endpoint: shown here only (or to a retry of this request with its " +
        "Idempotency-Key), keep it. An ed25519 endpoint has none to show: verify with its publicKey",
    ),
}).meta({ id: "CreatedWebhookEndpoint", description: "A new endpoint and its signing secret, shown only once." });

/** How long a replaced secret signs beside the new one, at most a week; a day unless asked. */
export const MAX_SECRET_OVERLAP_SECONDS = 7 * 86_400;

export const RotateWebhookSecret = z
  .strictObject({
    overlapSeconds: z
      .number()
      .int()
      .min(0)
      .max(MAX_SECRET_OVERLAP_SECONDS)
      .default(86_400)
      .describe("How long deliveries are signed with the replaced secret too (0: not at all); a day unless given"),
  })
  .meta({ id: "RotateWebhookSecret" });

export const RotatedWebhookSecret = z
  .object({
    secret: z
      .string()
      .regex(/^whsec_[A-Za-z0-9+/]{43}=$/)
      .optional()
      .describe("An hmac endpoint's new signing secret: shown here only, keep it"),
    publicKey: PublicKey.optional().describe("An ed25519 endpoint's new public key: verify with it from now on"),
    previousSecretExpiresAt: z.iso
      .datetime()
      .describe("Until then deliveries carry a signature with each secret or key, space-separated"),
  })
  .meta({
    id: "RotatedWebhookSecret",
    description: "An endpoint's new signing secret, shown only once, or its new public key.",
  });

export const RecoverWebhookDeliveries = z
  .strictObject({
    since: z.iso
      .datetime({ offset: true })
      .describe("Every delivery of an event since then that failed is sent again (settled deliveries are kept 7 days)"),
    confirmUrl: z
      .string()
      .optional()
      .describe(
        "The endpoint's URL as it is now: needed when it changed after `since` (those deliveries failed at another " +
          "URL), else 409 webhook_url_unconfirmed",
      ),
  })
  .meta({ id: "RecoverWebhookDeliveries" });

export const RecoveredWebhookDeliveries = z
  .object({
    recovered: z.number().int().describe("Failed deliveries made due now, each with a fresh retry schedule"),
    more: z.boolean().describe("true: more remain; ask again with the same since"),
  })
  .meta({ id: "RecoveredWebhookDeliveries" });

export const WebhookTestEvent = z
  .object({
    id: z
      .string()
      .regex(/^evt_test_[0-9a-f]{32}$/)
      .describe("The test's id, also its webhook-id"),
    type: z.literal("webhook.test").describe("Never an order event's type: nothing changed"),
    createdAt: z.iso.datetime(),
    endpointId: z
      .string()
      .regex(/^we_[0-9a-f]{20}$/)
      .describe("The endpoint it was sent to"),
  })
  .meta({ id: "WebhookTestEvent", description: "A test event: signed as every delivery, about no order." });

/** The endpoint as a notice of it carries it: what it was when the notice was made. */
const NoticedEndpoint = z.object({
  id: z.string().regex(/^we_[0-9a-f]{20}$/),
  url: z.string(),
  status: z.enum(["enabled", "disabled"]).describe("disabled in a webhook_endpoint.disabled notice"),
  failingSince: z.iso.datetime().describe("Since when every attempt has failed"),
  lastDeliveredAt: z.iso.datetime().nullable().describe("When a delivery last succeeded; null if none ever did"),
  disabledReason: z.string().nullable().describe("Why it was disabled, as its owner is told; null while enabled"),
});

export const EndpointNotice = z
  .object({
    id: z
      .string()
      .regex(/^ntc_[1-9][0-9]*$/)
      .describe("The notice's id, also its webhook-id: of its own, never an order event's sequence"),
    type: z
      .enum(ENDPOINT_NOTICE_TYPES)
      .describe(
        "webhook_endpoint.failing: every attempt has failed for WEBHOOK_FAILING_AFTER (a day unless the deployment " +
          "says otherwise); webhook_endpoint.disabled: for WEBHOOK_DISABLE_AFTER (5 days), and it was disabled",
      ),
    createdAt: z.iso.datetime(),
    endpoint: NoticedEndpoint.describe("The failing endpoint, as it was then"),
  })
  .meta({
    id: "EndpointNotice",
    description: "Another endpoint of the account fails: its owner told by another path than that endpoint.",
  });

export const WebhookEndpointList = z
  .object({ data: z.array(WebhookEndpoint).describe("The account's endpoints, oldest first") })
  .meta({ id: "WebhookEndpointList" });

const endpointId = z
  .string()
  .regex(/^we_[0-9a-f]{20}$/)
  .describe("The endpoint's id, we_ and 20 hex digits");
export const EndpointIdParams = z.object({ endpointId });
export const DeliveryParams = z.object({
  endpointId,
  deliveryId: z
    .string()
    .regex(/^wd_[0-9a-f]{20}_-?[1-9][0-9]{0,18}$/)
    .describe("The delivery's id, as the deliveries list gives it"),
});

/** The most attempts a delivery shows, newest first. */
export const ATTEMPTS_SHOWN = 10;

/** What a receiver made of one POST: what a delivery's attempt and a test event's result both say. */
const receiverAnswer = {
  status: z.number().int().nullable().describe("The receiver's HTTP status; null when it gave none"),
  durationMs: z.number().int().describe("From sending to the answer's status and headers, or to the failure"),
  response: z
    .string()
    .nullable()
    .describe("The start of the receiver's answer (its first chunk, at most 256 characters); null without one"),
  error: z.string().nullable().describe("What went wrong, when no answer came, or why nothing was sent"),
};

export const WebhookAttempt = z
  .object({ at: z.iso.datetime().describe("When the attempt was made"), ...receiverAnswer })
  .meta({ id: "WebhookAttempt", description: "One attempt of a delivery." });

export const WebhookTestResult = z
  .object({
    id: z.string().describe("The test event's id"),
    delivered: z.boolean().describe("true: the receiver answered 2xx"),
    ...receiverAnswer,
  })
  .meta({ id: "WebhookTestResult", description: "What the receiver made of a test event." });

export const WebhookDelivery = z
  .object({
    id: z.string(),
    eventId: z
      .string()
      .regex(/^(evt|ntc)_[1-9][0-9]*$/)
      .describe("The event delivered (evt_…), or the notice (ntc_…, another endpoint failing): its webhook-id"),
    attempts: z.number().int().describe("Attempts made so far"),
    lastStatus: z
      .number()
      .int()
      .nullable()
      .describe("The receiver's HTTP status at the last attempt; null before one, or when it gave none"),
    lastError: z.string().nullable().describe("What went wrong at the last attempt"),
    nextAttemptAt: z.iso.datetime().nullable().describe("When the next attempt is due; null when none is"),
    heldBehind: z
      .string()
      .nullable()
      .describe(
        "A fifo endpoint's pending delivery waits for this one (evt_..., or a notice's ntc_...), the first pending " +
          "in its line: it is sent once that one is delivered or given up; null otherwise",
      ),
    outcome: z
      .enum(["pending", "delivered", "failed"])
      .describe("failed: every attempt of the retry schedule failed, or the endpoint was disabled"),
    createdAt: z.iso.datetime(),
    attemptLog: z.array(WebhookAttempt).describe(`Its newest attempts, newest first (at most ${ATTEMPTS_SHOWN})`),
  })
  .meta({ id: "WebhookDelivery", description: "One event's delivery to one endpoint." });

/** The most deliveries the list shows, newest first. */
export const DELIVERIES_SHOWN = 100;
