import type { ClientInfo } from "../runtime/https-server.ts";

type Fetch = (request: Request, client: ClientInfo) => Response | Promise<Response>;

/**
 * One listener, two apps: /ui/* goes to the web UI, and a browser asking for / (Accept:
 * text/html) is sent there; everything else goes to the API untouched, exactly as before.
 */
export function withUi(api: (request: Request) => Response | Promise<Response>, ui: Fetch): Fetch {
  return (request, client) => {
    const path = new URL(request.url).pathname;
    if (path === "/ui" || path.startsWith("/ui/")) return ui(request, client);
    if (path === "/" && request.method === "GET" && (request.headers.get("accept") ?? "").includes("text/html")) {
      return new Response(null, { status: 303, headers: { Location: "/ui" } });
    }
    return api(request);
  };
}
