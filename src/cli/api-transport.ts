/** How the CLI reaches the management API: over HTTPS, or in process on the data directory. */
export interface ApiResponse {
  status: number;
  contentType: string;
  text: string;
}

export interface ApiTransport {
  request(method: string, path: string, body?: unknown): Promise<ApiResponse>;
  /** Follows a text/event-stream, line by line; resolves with the response when it is not a stream. */
  stream(path: string, onLine: (line: string) => void): Promise<ApiResponse | undefined>;
}
