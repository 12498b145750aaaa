// Driver is rebalsim's real-Kafka consumer (docs/real-kafka-testbed.md §3.3):
// one JVM per scenario member, a KafkaConsumer poll loop with the scenario's
// workload, printing one JSON event per line on stdout. The same source
// compiles against kafka-clients 2.8.x, 3.x and 4.x (it names no API newer
// than 2.5). "admin" mode creates the topics, pre-fills them and describes
// the group at the end.
import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.InputStreamReader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class Driver {
    static String member = "";
    static final long PID = ProcessHandle.current().pid();

    static synchronized void emit(String event, String fields) {
        StringBuilder b = new StringBuilder(160);
        b.append("{\"ts_ms\":").append(System.currentTimeMillis())
         .append(",\"member\":\"").append(member).append("\",\"pid\":").append(PID)
         .append(",\"event\":\"").append(event).append('"');
        if (fields != null && !fields.isEmpty()) b.append(',').append(fields);
        b.append('}');
        System.out.println(b);
        System.out.flush();
    }

    static String str(String s) {
        return "\"" + String.valueOf(s).replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", " ") + "\"";
    }

    static String parts(Collection<TopicPartition> ps) {
        List<String> l = new ArrayList<>();
        for (TopicPartition tp : ps) l.add(str(tp.topic() + "-" + tp.partition()));
        Collections.sort(l);
        return "[" + String.join(",", l) + "]";
    }

    /** Dist draws a scenario distribution (scenario/types.go Dist), in ms. */
    static final class Dist {
        final String kind; final double a, b;
        Dist(String spec) {
            String[] f = spec.split(":");
            kind = f[0];
            a = f.length > 1 ? Double.parseDouble(f[1]) : 0;
            b = f.length > 2 ? Double.parseDouble(f[2]) : 0;
        }
        long draw(Random r) {
            switch (kind) {
                case "constant": return (long) a;
                case "uniform": return (long) (a + r.nextDouble() * (b - a));
                case "exponential": return (long) (a - b * Math.log(1 - r.nextDouble()));
                case "lognormal": { // a = median, b = p99
                    double sigma = b > a && a > 0 ? Math.log(b / a) / 2.3263478740408408 : 0;
                    return (long) (a * Math.exp(sigma * r.nextGaussian()));
                }
                default: throw new IllegalArgumentException("unknown distribution " + kind);
            }
        }
    }

    static void sleep(long ms) {
        if (ms <= 0) return;
        try { Thread.sleep(ms); } catch (InterruptedException e) { Thread.currentThread().interrupt(); }
    }

    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        try (FileInputStream in = new FileInputStream(args[1])) { p.load(in); }
        Properties d = new Properties(); // driver.* settings, removed from the client's
        for (String k : p.stringPropertyNames()) if (k.startsWith("driver.")) { d.setProperty(k.substring(7), p.getProperty(k)); p.remove(k); }
        member = d.getProperty("member", "admin");
        if (args[0].equals("admin")) { admin(p, d); return; }
        consume(p, d);
    }

    static void consume(Properties p, Properties d) {
        ProcessHandle.current().info().startInstant().ifPresent(i -> emit("jvm_start", "\"at_ms\":" + i.toEpochMilli()));
        Random rnd = new Random(Long.parseLong(d.getProperty("seed", "1")));
        Dist pollInterval = new Dist(d.getProperty("poll.interval", "constant:100"));
        Dist pollTimeout = new Dist(d.getProperty("poll.timeout", "constant:100"));
        Dist callbackTime = new Dist(d.getProperty("callback.time", "constant:0"));
        List<String> topics = List.of(d.getProperty("topics").split(","));
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        final KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p);
        final AtomicBoolean closing = new AtomicBoolean(false);
        final AtomicLong slowPoll = new AtomicLong(0);
        final CountDownLatch done = new CountDownLatch(1);
        final CountDownLatch go = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            emit("shutdown_start", null);
            closing.set(true);
            go.countDown();
            c.wakeup();
            try { done.await(); } catch (InterruptedException e) { }
        }));
        Thread cmd = new Thread(() -> { // stdin commands: {"go": true}, {"slow_poll_ms": N}
            try (BufferedReader r = new BufferedReader(new InputStreamReader(System.in))) {
                String line;
                while ((line = r.readLine()) != null) {
                    if (line.contains("\"go\"")) go.countDown();
                    java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"slow_poll_ms\"\\s*:\\s*(\\d+)").matcher(line);
                    if (m.find()) { slowPoll.set(Long.parseLong(m.group(1))); emit("slow_poll", "\"ms\":" + m.group(1)); }
                }
            } catch (Exception e) { }
        }, "rk-stdin");
        cmd.setDaemon(true);
        cmd.start();
        ConsumerRebalanceListener l = new ConsumerRebalanceListener() {
            void cb(String ev, Collection<TopicPartition> ps) {
                org.apache.kafka.clients.consumer.ConsumerGroupMetadata g = c.groupMetadata();
                emit(ev, "\"generation\":" + g.generationId() + ",\"member_id\":" + str(g.memberId()) + ",\"partitions\":" + parts(ps));
                long t = callbackTime.draw(rnd);
                sleep(t);
            }
            @Override public void onPartitionsRevoked(Collection<TopicPartition> ps) { cb("partitions_revoked", ps); }
            @Override public void onPartitionsAssigned(Collection<TopicPartition> ps) { cb("partitions_assigned", ps); }
            @Override public void onPartitionsLost(Collection<TopicPartition> ps) { cb("partitions_lost", ps); }
        };
        // The JVM has started and loaded the client: wait for the
        // orchestrator's go, the member's start instant in the scenario
        // (the simulator's process start has no JVM start-up).
        // Warm-up before the go: one metadata request (no group traffic)
        // loads and compiles the client's network path, which otherwise
        // costs the first JoinGroup seconds of CPU on a loaded machine.
        // Not on a host that is down until the go (host-down's fresh
        // process): its requests would only meet the drop-all rules.
        if (!d.getProperty("warmup", "true").equals("false"))
            try { c.partitionsFor(topics.get(0)); } catch (Exception e) { emit("warmup_failed", "\"message\":" + str(e.getMessage())); }
        emit("ready", null);
        try { go.await(); } catch (InterruptedException e) { return; }
        emit("started", null);
        c.subscribe(topics, l);
        emit("subscribed", "\"topics\":" + str(String.join(",", topics)));
        boolean first = true;
        try {
            while (!closing.get()) {
                ConsumerRecords<byte[], byte[]> rs = c.poll(Duration.ofMillis(pollTimeout.draw(rnd)));
                if (first && rs.count() > 0) { emit("first_records", "\"count\":" + rs.count()); first = false; }
                if (rs.count() > 0) {
                    long s = slowPoll.getAndSet(0);
                    sleep(s > 0 ? s : pollInterval.draw(rnd));
                }
            }
        } catch (WakeupException e) {
            // shutdown
        } catch (Exception e) {
            emit("fatal", "\"class\":" + str(e.getClass().getName()) + ",\"message\":" + str(e.getMessage()));
        }
        try {
            for (Map.Entry<MetricName, ? extends Metric> m : c.metrics().entrySet()) {
                MetricName n = m.getKey();
                if (n.group().equals("consumer-coordinator-metrics") && (n.name().equals("rebalance-total") || n.name().equals("failed-rebalance-total")))
                    emit("metric", "\"name\":" + str(n.name()) + ",\"value\":" + m.getValue().metricValue());
            }
            c.close();
        } catch (Exception e) {
            emit("close_error", "\"class\":" + str(e.getClass().getName()) + ",\"message\":" + str(e.getMessage()));
        }
        emit("closed", null);
        done.countDown();
    }

    static void admin(Properties p, Properties d) throws Exception {
        String op = d.getProperty("op");
        try (Admin a = Admin.create(p)) {
            if (op.equals("create")) {
                // topics=name:partitions:rf,...
                List<NewTopic> nt = new ArrayList<>();
                for (String t : d.getProperty("topics").split(",")) {
                    String[] f = t.split(":");
                    nt.add(new NewTopic(f[0], Integer.parseInt(f[1]), Short.parseShort(f[2])));
                }
                a.createTopics(nt).all().get();
                emit("topics_created", null);
                Properties pp = new Properties();
                pp.putAll(p);
                pp.put("key.serializer", ByteArraySerializer.class.getName());
                pp.put("value.serializer", ByteArraySerializer.class.getName());
                pp.put("linger.ms", "20");
                int per = Integer.parseInt(d.getProperty("records", "2000"));
                byte[] v = new byte[100];
                try (KafkaProducer<byte[], byte[]> pr = new KafkaProducer<>(pp)) {
                    for (String t : d.getProperty("topics").split(",")) {
                        String[] f = t.split(":");
                        for (int i = 0; i < Integer.parseInt(f[1]); i++)
                            for (int j = 0; j < per; j++) pr.send(new ProducerRecord<>(f[0], i, null, v));
                    }
                    pr.flush();
                }
                emit("prefilled", "\"records_per_partition\":" + per);
                // The first FindCoordinator creates __consumer_offsets and
                // elects its leader: do it before t0, so that the members
                // find a coordinator that is already there, as in the
                // simulator (without this a member's first JoinGroup got
                // NOT_COORDINATOR while the topic was being made [measured]).
                String groups = d.getProperty("groups", "");
                for (String g : groups.isEmpty() ? new String[0] : groups.split(",")) {
                    for (int i = 0; ; i++) {
                        try {
                            a.describeConsumerGroups(List.of(g)).all().get();
                            break;
                        } catch (Exception e) {
                            // A 4.x broker answers GROUP_ID_NOT_FOUND for a
                            // group that has no members yet: the coordinator
                            // was found and has loaded, which is all we need
                            // [measured: 4.3.1 broker, kafka-clients 4.3.1].
                            if (e.getCause() != null && e.getCause().getClass().getSimpleName().equals("GroupIdNotFoundException")) break;
                            if (i >= 30) throw e;
                            sleep(1000);
                        }
                    }
                }
                emit("coordinator_ready", null);
            } else if (op.equals("partitions")) {
                // add-partitions: loaded and connected ahead, the
                // createPartitions is sent at the orchestrator's go (a line
                // on stdin), the fault's instant.
                String t = d.getProperty("topic");
                a.listTopics().names().get();
                emit("ready", null);
                new BufferedReader(new InputStreamReader(System.in)).readLine();
                emit("started", null);
                a.createPartitions(Map.of(t, org.apache.kafka.clients.admin.NewPartitions.increaseTo(Integer.parseInt(d.getProperty("count"))))).all().get();
                emit("partitions_created", "\"topic\":" + str(t) + ",\"count\":" + d.getProperty("count"));
            } else if (op.equals("describe")) {
                for (String g : d.getProperty("groups").split(",")) {
                    ConsumerGroupDescription gd = a.describeConsumerGroups(List.of(g)).all().get().get(g);
                    int withAssignment = 0;
                    for (MemberDescription m : gd.members()) if (!m.assignment().topicPartitions().isEmpty()) withAssignment++;
                    emit("group", "\"group\":" + str(g) + ",\"state\":" + str(String.valueOf(gd.state())) + ",\"members\":" + gd.members().size() + ",\"members_with_assignment\":" + withAssignment + ",\"coordinator\":" + gd.coordinator().id());
                }
            }
        }
    }
}
