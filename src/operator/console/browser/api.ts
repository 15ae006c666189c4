/** The operators' console is a client of the operator API, with its session cookie: every check, limit and audit row applies. */
import { clientOf } from "../../../console/browser/api";

export const admin = clientOf("/admin");
