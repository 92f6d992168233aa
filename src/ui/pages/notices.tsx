/** @jsxImportSource hono/jsx */

/** The message a change left (role status) and a refusal (role alert), at the top of a page. */
export function Notices({ notice, error }: { notice?: string; error?: string }) {
  return (
    <>
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      {error && (
        <p class="notice error" role="alert">
          {error}
        </p>
      )}
    </>
  );
}
