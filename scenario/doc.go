// Package scenario reads, defaults and validates scenario files
// (INTERFACE.md, "The scenario file"). Decoding goes through a yaml.Node tree
// so that every error names the file, the line and the field path:
//
//	crash.yaml:12: groups[0].client.session.timeout.ms: heartbeat.interval.ms (3000) must be lower than session.timeout.ms (2000)
//
// Kafka client and broker properties keep their Kafka names and units
// (*.ms keys are integers in milliseconds); every other duration is a Go
// duration string ("250ms", "10s"). Absent keys take the defaults of the
// profile (see ProfileNames), so a parsed Scenario spells out every
// parameter and nothing downstream relies on a zero value.
package scenario
