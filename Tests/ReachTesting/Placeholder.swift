public enum ReachTestingPlaceholder {}
