// Writes the Locale.US time-zone names of Java 17's DateTimeFormatter, for every zone ID the JVM knows,
// as the tab-separated table engine/expression/zone_names.tsv that the Expression Language's date patterns
// read (letters v, vvvv, z, zzzz). The engine never runs Java; this only regenerates the data:
//
//     java scripts/zone-names.java > engine/expression/zone_names.tsv
//
// Each zone line holds: zone ID, generic short (v), generic long (vvvv), standard short (z), standard long
// (zzzz), daylight short (z), daylight long (zzzz); standard and daylight are what the formatter prints at
// an instant outside and inside daylight saving time. A zone that never observed daylight saving time in
// 1900-2100 has the names java.util.TimeZone gives for daylight. Lines starting with "=" give the zone
// Java's parser reads a name as, for every name more than one zone carries ("=" name, tab, zone ID).
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.time.temporal.TemporalQueries;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.TimeZone;
import java.util.TreeMap;
import java.util.TreeSet;

public class ZoneNames {
    static String format(String pattern, ZoneId zone, Instant instant) {
        return DateTimeFormatter.ofPattern(pattern, Locale.US).format(instant.atZone(zone));
    }

    /** An instant at which the zone is (daylight true) or is not in daylight saving time, or null. */
    static Instant instant(ZoneRules rules, boolean daylight) {
        for (Instant candidate : new Instant[] {Instant.parse("2024-01-15T12:00:00Z"),
                Instant.parse("2024-07-15T12:00:00Z")}) {
            if (rules.isDaylightSavings(candidate) == daylight) return candidate;
        }
        Instant at = Instant.parse("1900-01-01T00:00:00Z");
        Instant end = Instant.parse("2100-01-01T00:00:00Z");
        while (at.isBefore(end)) {
            ZoneOffsetTransition next = rules.nextTransition(at);
            if (next == null) break;
            at = next.getInstant();
            if (rules.isDaylightSavings(at) == daylight) return at;
        }
        return null;
    }

    /** The specific name the formatter prints at the instant, or java.util.TimeZone's when there is none. */
    static String name(ZoneId zone, TimeZone legacy, Instant instant, boolean daylight, String pattern) {
        if (instant != null) return format(pattern, zone, instant);
        return legacy.getDisplayName(daylight, pattern.length() == 4 ? TimeZone.LONG : TimeZone.SHORT, Locale.US);
    }

    public static void main(String[] args) {
        Map<String, TreeSet<String>> zonesByName = new HashMap<>();
        StringBuilder out = new StringBuilder();
        for (String id : new TreeSet<>(ZoneId.getAvailableZoneIds())) {
            ZoneId zone = ZoneId.of(id);
            ZoneRules rules = zone.getRules();
            TimeZone legacy = TimeZone.getTimeZone(id);
            Instant standard = instant(rules, false);
            Instant daylight = instant(rules, true);
            String[] names = {
                format("v", zone, Instant.EPOCH), format("vvvv", zone, Instant.EPOCH),
                name(zone, legacy, standard, false, "z"), name(zone, legacy, standard, false, "zzzz"),
                name(zone, legacy, daylight, true, "z"), name(zone, legacy, daylight, true, "zzzz"),
            };
            out.append(id).append('\t').append(String.join("\t", names)).append('\n');
            for (String name : names) zonesByName.computeIfAbsent(name, key -> new TreeSet<>()).add(id);
        }
        TreeMap<String, String> parsed = new TreeMap<>();
        for (Map.Entry<String, TreeSet<String>> entry : zonesByName.entrySet()) {
            if (entry.getValue().size() < 2) continue;
            String name = entry.getKey();
            for (String pattern : new String[] {"z", "zzzz", "v", "vvvv"}) {
                try {
                    ZoneId zone = DateTimeFormatter.ofPattern(pattern, Locale.US).parse(name)
                            .query(TemporalQueries.zoneId());
                    parsed.put(name, zone.getId());
                    break;
                } catch (RuntimeException notThisLetter) {
                    // the name is not one this letter reads; try the next
                }
            }
        }
        for (Map.Entry<String, String> entry : parsed.entrySet()) {
            out.append('=').append(entry.getKey()).append('\t').append(entry.getValue()).append('\n');
        }
        System.out.print(out);
    }
}
