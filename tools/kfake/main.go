// Command kfake runs a Kafka-protocol broker (franz-go's kfake) on
// 127.0.0.1 for process-level tests, prints its address and runs until it
// is killed.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
	topic := flag.String("topic", "cdc", "topic to create")
	partitions := flag.Int("partitions", 3, "partitions of the topic")
	port := flag.Int("port", 0, "port to listen on (0: any free port)")
	flag.Parse()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(*port), kfake.SeedTopics(int32(*partitions), *topic))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer c.Close()
	fmt.Println(c.ListenAddrs()[0])
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
}
