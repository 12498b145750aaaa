#!/bin/sh
# Regenerates testdata/kafka-tests.tsv: the test methods of the Kafka test
# classes rebalsim ports (kafkatests.Classes), at every release a Go test
# cites ("// Kafka: Class.method @tag"). Needs two git directories (bare
# mirrors work): apache/kafka and confluentinc/kafka (whose v8.0.0 is
# Apache 4.0.0). Add a tag here when a new citation needs it.
#   usage: internal/kafkatests/extract.sh APACHE_GIT_DIR CONFLUENT_GIT_DIR
set -eu
apache=$1
confluent=$2
out=internal/kafkatests/testdata/kafka-tests.tsv
rm -f "$out"
go run ./internal/kafkatests/extract -git-dir "$apache" -repo apache/kafka \
	-tags 2.2.0,2.5.0,2.6.0,2.6.1,3.2.0,3.3.1,3.6.1,3.7.0 -out "$out"
go run ./internal/kafkatests/extract -git-dir "$confluent" -repo confluentinc/kafka \
	-tags 4.0.0=v8.0.0,4.3.0=v8.3.0,4.4=4.4 -out "$out"
