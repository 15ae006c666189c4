-- Ed25519 signing (docs/api.md#receiving-webhooks): an endpoint that signs with a key pair keeps its public key
-- here, shown to its owner as `whpk_...`; its private key is sealed in secret_sealed as an HMAC endpoint's secret is.
-- NULL: the endpoint signs with an HMAC secret.
ALTER TABLE webhook_endpoints ADD COLUMN public_key TEXT;
