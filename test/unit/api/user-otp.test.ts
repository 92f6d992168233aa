import { describe, expect, test } from "bun:test";
import { base32Decode } from "../../../src/control/auth/totp.ts";
import { apiFixture } from "./fixture.ts";

describe("API /api/v1/users/{name}/otp", () => {
  test("POST enrols once (secret, otpauth URI, SVG), the view shows since when, DELETE resets; audited and announced", async () => {
    const f = apiFixture();
    await f.request("POST", "/api/v1/users", { name: "alice" });
    const enrolled = await f.request("POST", "/api/v1/users/alice/otp", {});
    expect(enrolled.status).toBe(201);
    const { secret, uri, svg, user, enrolledAt } = enrolled.body;
    expect(user).toBe("alice");
    expect(base32Decode(secret).ok).toBe(true);
    expect(uri).toBe(`otpauth://totp/gw:alice?secret=${secret}&issuer=gw&algorithm=SHA1&digits=6&period=30`);
    expect(svg).toStartWith("<svg ");
    const view = (await f.request("GET", "/api/v1/users/alice")).body;
    expect(view.otp).toEqual({ enrolled: true, since: enrolledAt });
    expect(JSON.stringify(view)).not.toContain(secret);
    expect((await f.request("GET", "/api/v1/users")).text).not.toContain(secret);

    const again = await f.request("POST", "/api/v1/users/alice/otp", {});
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("otp_already_enrolled");

    expect((await f.request("DELETE", "/api/v1/users/alice/otp")).status).toBe(204);
    const gone = await f.request("DELETE", "/api/v1/users/alice/otp");
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe("otp_not_enrolled");
    expect((await f.request("GET", "/api/v1/users/alice")).body.otp).toEqual({ enrolled: false, since: null });

    const actions = f.control.audit.list().map((a) => a.action);
    expect(actions).toContain("user.otp.enroll");
    expect(actions).toContain("user.otp.reset");
    expect(JSON.stringify(f.control.audit.list())).not.toContain(secret);
    expect(f.events.filter((e) => e.type === "user.updated" && e.name === "alice")).toHaveLength(2);
  });

  test("unknown user 404, read tokens 403, a body other than {} is 400", async () => {
    const f = apiFixture();
    expect((await f.request("POST", "/api/v1/users/nobody/otp", {})).body.error.code).toBe("user_not_found");
    await f.request("POST", "/api/v1/users", { name: "bob" });
    expect((await f.request("POST", "/api/v1/users/bob/otp", {}, { token: f.reader })).status).toBe(403);
    const bad = await f.request("POST", "/api/v1/users/bob/otp", { secret: "AAAA" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("invalid_input");
    expect((await f.request("GET", "/api/v1/users/bob")).body.otp.enrolled).toBe(false);
  });

  test("documented in openapi.json", async () => {
    const f = apiFixture();
    const doc = (await f.request("GET", "/api/v1/openapi.json")).body;
    const otp = doc.paths["/api/v1/users/{name}/otp"];
    expect(Object.keys(otp.post.responses["201"].content["application/json"].schema.properties).sort()).toEqual(["enrolledAt", "secret", "svg", "uri", "user"]);
    expect(otp.post.responses["409"].description).toContain("otp_already_enrolled");
    expect(otp.delete.responses["404"].description).toContain("otp_not_enrolled");
    expect(doc.paths["/api/v1/users/{name}"].get.responses["200"].content["application/json"].schema.properties.otp).toBeDefined();
  });
});
