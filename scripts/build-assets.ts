/**
 * The static assets the worker serves before itself (wrangler.jsonc "assets"),
 * made from node_modules and web/ by `npm install` (postinstall), and again
 * by `npm start` and `npm test` (so they serve the pages as edited), and
 * nothing is
 * fetched from another host at run time. Not committed: they can never drift
 * from the locked versions or the source.
 * - The API reference page's script (Scalar's standalone bundle), under /v1/docs.
 * - The console (docs/api.md#the-console): its script and stylesheet, bundled
 *   from web/console with the consoles' kit (web/kit) and the chart library,
 *   under /console; and the operators' console's
 *   (docs/operations.md#the-operators-console) from web/operator, with the
 *   same kit, under /operator.
 */
import { buildAssets } from "./lib/assets";

await buildAssets();
