/** A failure, announced to screen readers as it appears. */
export function Alert({ message }: { message: string | null }) {
  if (message === null) return null;
  return (
    <p role="alert" class="error">
      {message}
    </p>
  );
}
