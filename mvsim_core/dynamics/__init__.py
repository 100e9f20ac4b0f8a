"""Vehicle dynamics pieces: wheel-ground friction models (:mod:`.friction`) and motor controllers with their PID
(:mod:`.controllers`)."""
