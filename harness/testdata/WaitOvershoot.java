// WaitOvershoot measures how late Object.wait(100) returns: the lateness of
// each wait of the classic consumer's HeartbeatThread
// (AbstractCoordinator.this.wait(retryBackoffMs), AbstractCoordinator
// .HeartbeatThread.run @3.9.0), which the simulator's heartbeat.wait.overshoot
// models (docs/PROFILES.md). It prints the median and the 90th percentile of
// the lateness over N waits, idle and with a second thread spinning on the
// other core.
//
//   javac -d /tmp WaitOvershoot.java && nice -n 10 java -cp /tmp WaitOvershoot [N]
import java.util.Arrays;

public class WaitOvershoot {
    static volatile boolean spin;

    static double[] measure(int n) throws InterruptedException {
        Object lock = new Object();
        double[] late = new double[n];
        synchronized (lock) {
            for (int i = 0; i < n; i++) {
                long t0 = System.nanoTime();
                lock.wait(100);
                late[i] = (System.nanoTime() - t0) / 1e6 - 100.0;
            }
        }
        Arrays.sort(late);
        return late;
    }

    static void report(String what, double[] late) {
        System.out.printf("%-22s n=%d median=%.3f ms p90=%.3f ms min=%.3f ms max=%.3f ms%n", what, late.length,
            late[late.length / 2], late[(int) (late.length * 0.9)], late[0], late[late.length - 1]);
    }

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 300;
        System.out.printf("cores=%d java=%s%n", Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"));
        measure(20); // warm-up
        report("idle", measure(n));
        spin = true;
        Thread busy = new Thread(() -> {
            long x = 0;
            while (spin) {
                x++;
            }
        });
        busy.setDaemon(true);
        busy.start();
        report("other core busy", measure(n));
        spin = false;
        busy.join();
    }
}
