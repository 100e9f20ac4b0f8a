"""ROS 2 bridge for mvsim_core (rclpy). Nothing in mvsim_core imports this package."""
