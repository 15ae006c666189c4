import { z } from "zod";
import { ERROR_STATUS, type ErrorCode } from "../errors";

export const ErrorBody = z
  .object({
    code: z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]).describe("Machine-readable error code"),
    message: z.string().describe("Human-readable description"),
    status: z.number().int().describe("The HTTP status code"),
  })
  .meta({ id: "Error" });
