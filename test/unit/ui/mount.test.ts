import { describe, expect, test } from "bun:test";
import { withUi } from "../../../src/ui/mount.ts";

describe("withUi: the UI beside the API on one listener", () => {
  const fetch = withUi(
    (r) => new Response(`api ${new URL(r.url).pathname}`),
    (r, client) => new Response(`ui ${new URL(r.url).pathname} ${client.address}`),
  );
  const get = async (path: string, accept?: string) => {
    const res = await fetch(new Request(`https://gw.test${path}`, { headers: accept ? { accept } : {} }), { address: "198.51.100.1" });
    return { status: res.status, location: res.headers.get("location"), text: await res.text() };
  };

  test("/ui and below go to the UI, with the client's address", async () => {
    expect((await get("/ui")).text).toBe("ui /ui 198.51.100.1");
    expect((await get("/ui/users")).text).toBe("ui /ui/users 198.51.100.1");
  });

  test("a browser asking for / is sent to /ui; API clients are not", async () => {
    expect(await get("/", "text/html,application/xhtml+xml")).toMatchObject({ status: 303, location: "/ui" });
    expect((await get("/", "application/json")).text).toBe("api /");
    expect((await get("/")).text).toBe("api /");
  });

  test("everything else reaches the API untouched", async () => {
    for (const path of ["/api/v1/status", "/metrics", "/uix", "/api/v1/ui"]) expect((await get(path, "text/html")).text).toBe(`api ${path}`);
  });
});
