import type { DestinationName } from "../destination-names.ts";
import { href } from "../routes.ts";

/** A destination as a person reads it: its URL, linked to its page; its id only when no URL. */
export function DestinationLabel({
  workspaceId,
  id,
  name,
}: {
  workspaceId: string;
  id: string;
  name: DestinationName | undefined;
}) {
  if (name?.kind === "listen") return <span>listen session {id}</span>;
  if (name?.kind === "deleted") return <span>deleted destination {id}</span>;
  const link = href({ page: "destination", workspace: workspaceId, id });
  return <a href={link}>{name?.kind === "url" ? name.url : id}</a>;
}
