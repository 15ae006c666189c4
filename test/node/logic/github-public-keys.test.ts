import { describe, expect, it } from "vitest";
import {
  GithubKeysUnavailable,
  GithubPublicKeys,
  KEYS_KEPT_MS,
  REFETCH_AFTER_MS,
} from "../../../src/revocation/github-public-keys";
import { GITHUB_SAMPLE, publishedKeys } from "../../support/github-secret-scanning";

const URL = "https://keys.example/secret_scanning";
const T = Date.UTC(2030, 0, 1);

/** A key server answering GitHub's shape, or failing while `down`; counting its fetches. */
function server() {
  const state = { down: false, fetches: 0, keys: [{ id: GITHUB_SAMPLE.keyIdentifier, pem: GITHUB_SAMPLE.publicKey }] };
  const fetcher = (async () => {
    state.fetches += 1;
    await new Promise((resolve) => setTimeout(resolve, 5));
    return state.down ? new Response("unavailable", { status: 503 }) : Response.json(publishedKeys(...state.keys));
  }) as unknown as typeof fetch;
  return { state, fetcher };
}

describe("GitHub's published keys, as an isolate keeps them", () => {
  it("fetches once for reports that arrive together, and keeps the list a day", async () => {
    const { state, fetcher } = server();
    const keys = new GithubPublicKeys();
    const found = await Promise.all(
      Array.from({ length: 5 }, () => keys.find(URL, GITHUB_SAMPLE.keyIdentifier, fetcher, T)),
    );
    expect(found.every((key) => key !== undefined)).toBe(true);
    expect(state.fetches).toBe(1);
    expect(await keys.find(URL, GITHUB_SAMPLE.keyIdentifier, fetcher, T + KEYS_KEPT_MS - 1)).toBeDefined();
    expect(state.fetches).toBe(1);
    await keys.find(URL, GITHUB_SAMPLE.keyIdentifier, fetcher, T + KEYS_KEPT_MS);
    expect(state.fetches).toBe(2);
  });

  it("fetches again for an identifier it does not know, at most once a minute, and finds a key published since", async () => {
    const { state, fetcher } = server();
    const keys = new GithubPublicKeys();
    await keys.find(URL, GITHUB_SAMPLE.keyIdentifier, fetcher, T);
    state.keys.push({ id: "next", pem: GITHUB_SAMPLE.publicKey });
    expect(await keys.find(URL, "next", fetcher, T + 1_000)).toBeUndefined();
    expect(state.fetches).toBe(1);
    expect(await keys.find(URL, "next", fetcher, T + REFETCH_AFTER_MS)).toBeDefined();
    expect(state.fetches).toBe(2);
  });

  it("answers unavailable, never 'no such key', while no fetch has succeeded; keeps a list in hand when a later fetch fails", async () => {
    const { state, fetcher } = server();
    const keys = new GithubPublicKeys();
    state.down = true;
    await expect(keys.find(URL, GITHUB_SAMPLE.keyIdentifier, fetcher, T)).rejects.toBeInstanceOf(GithubKeysUnavailable);
    // Within the minute: still unavailable, and no second fetch.
    await expect(keys.find(URL, GITHUB_SAMPLE.keyIdentifier, fetcher, T + 1_000)).rejects.toBeInstanceOf(
      GithubKeysUnavailable,
    );
    expect(state.fetches).toBe(1);
    state.down = false;
    expect(await keys.find(URL, GITHUB_SAMPLE.keyIdentifier, fetcher, T + REFETCH_AFTER_MS)).toBeDefined();
    state.down = true;
    expect(
      await keys.find(URL, GITHUB_SAMPLE.keyIdentifier, fetcher, T + REFETCH_AFTER_MS + KEYS_KEPT_MS),
    ).toBeDefined();
  });
});
