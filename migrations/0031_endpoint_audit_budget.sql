-- The endpoints' audit carries its budget (docs/operations.md#the-operators-console):
-- a budget's page reads its own rows by an index, a page at a time, instead of
-- scanning every row for its endpoints or its budget in the changes' JSON.
-- Old rows take their endpoint's budget, or the one their changes name (an
-- endpoint deleted since); a row of neither keeps NULL and is in no budget's
-- page. Retries and test events are counted an hour a row from here on.
ALTER TABLE webhook_endpoint_events ADD COLUMN budget TEXT;
UPDATE webhook_endpoint_events SET budget = coalesce(
  (SELECT budget FROM webhook_endpoints WHERE webhook_endpoints.id = webhook_endpoint_events.endpoint_id),
  json_extract(changes, '$.budget')
);
CREATE INDEX webhook_endpoint_events_by_budget ON webhook_endpoint_events (budget, at);
