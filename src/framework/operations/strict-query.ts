/** Query parameters read strictly, so a typo never widens a filter: 400 `invalid_query` naming it. */
import { ApiError } from "../api-error";

/** What each parameter accepts, as the 400's message and the document say it. */
export type ParameterTexts = Readonly<Record<string, string>>;

export interface StrictQuery<P extends ParameterTexts> {
  value(name: keyof P & string): string | undefined;
  invalid(name: keyof P & string, value: string): ApiError;
}

/** Checks the names in `search` against `parameters`; then each value is the caller's to read. */
export function strictQuery<P extends ParameterTexts>(search: URLSearchParams, parameters: P): StrictQuery<P> {
  const seen = new Set<string>();
  for (const name of search.keys()) {
    if (!Object.hasOwn(parameters, name)) {
      throw new ApiError(
        "invalid_query",
        `Unknown query parameter ${JSON.stringify(name.slice(0, 100))}. This operation takes ` +
          `${Object.keys(parameters).join(", ")}.`,
      );
    }
    if (seen.has(name))
      throw new ApiError("invalid_query", `${name} is given more than once; give it once (a list is comma-separated).`);
    seen.add(name);
  }
  return {
    value: (name) => search.get(name) ?? undefined,
    invalid: (name, value) =>
      new ApiError("invalid_query", `${name} must be ${parameters[name]}; got ${JSON.stringify(value.slice(0, 100))}.`),
  };
}

/** A whole number from `min` to `max` written plainly (no sign, no leading zero, no exponent); undefined otherwise. */
export function plainWholeNumber(text: string, min: number, max: number): number | undefined {
  if (!/^(0|[1-9][0-9]{0,6})$/.test(text)) return undefined;
  const number = Number(text);
  return number >= min && number <= max ? number : undefined;
}

/** A comma-separated list of values from `allowed`, sorted and without repeats; undefined if any is not. */
export function oneOrMoreOf<T extends string>(text: string, allowed: readonly T[]): T[] | undefined {
  const listed = text.split(",");
  if (!listed.every((one): one is T => (allowed as readonly string[]).includes(one))) return undefined;
  return [...new Set(listed)].sort();
}

/** The parameters as the document lists them: what each accepts (the 400's words), and its JSON schema. */
export function documentedParameters<P extends ParameterTexts>(
  texts: P,
  schemas: Record<keyof P, Record<string, unknown>>,
) {
  return Object.entries(texts).map(([name, accepts]) => ({
    name,
    description: accepts[0]!.toUpperCase() + accepts.slice(1),
    schema: schemas[name as keyof P],
  }));
}
