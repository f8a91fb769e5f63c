// A tracking's candidate dispatch ids (DESIGN §10 "Matching", step 1): what the provider's reference
// fields hold (AfterShip `order_id` / `custom_fields.dispatch_id`, Shippo `metadata`, Ship24
// `clientTrackerId` / `shipmentReference`), each as it is and, when it is free text such as Shippo's
// 100-character `metadata` ("order 1182, dispatch 7d3c…"), every UUID written inside it. The caller
// keeps only those that are one of the issuer's dispatch ids.
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

export function referencesFrom(...values: (string | null | undefined)[]): string[] {
  const found = new Set<string>();
  for (const value of values) {
    const trimmed = value?.trim();
    if (!trimmed) continue;
    found.add(trimmed);
    for (const uuid of trimmed.match(UUID) ?? []) found.add(uuid.toLowerCase());
  }
  return [...found];
}
