import { useEffect, useRef, useState } from "preact/hooks";

/**
 * A new destination's signing secret, shown once: copy it or download it, then dismiss it.
 * The secret lives only in the state of the page that created it; dismissing drops it, so it
 * leaves the DOM and nothing keeps a reference. It is never written to storage.
 */
export function SecretPanel({
  destinationId,
  secret,
  onDismiss,
}: {
  destinationId: string;
  secret: string;
  onDismiss: () => void;
}) {
  const [copied, setCopied] = useState<string | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    heading.current?.focus();
  }, []);

  const copy = async (): Promise<void> => {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied("Copied to the clipboard.");
    } catch {
      setCopied("The browser refused the clipboard: select the secret and copy it.");
    }
  };
  const download = (): void => {
    const url = URL.createObjectURL(new Blob([`${secret}\n`], { type: "text/plain" }));
    const link = document.createElement("a");
    link.href = url;
    link.download = `${destinationId}.secret`;
    link.click();
    URL.revokeObjectURL(url);
  };

  return (
    <section class="secret" aria-labelledby="secret-heading">
      <h2 id="secret-heading" tabIndex={-1} ref={heading}>
        Signing secret of {destinationId}
      </h2>
      <p>
        Save it now: it is shown only this once. Receivers verify each notification's
        Webhook-Signature with it.
      </p>
      <code class="secret-value" data-testid="secret">
        {secret}
      </code>
      <div class="actions">
        <button type="button" onClick={() => void copy()}>
          Copy
        </button>
        <button type="button" onClick={download}>
          Download
        </button>
        <button type="button" class="secondary" onClick={onDismiss}>
          I have saved it
        </button>
      </div>
      <p role="status">{copied}</p>
    </section>
  );
}
